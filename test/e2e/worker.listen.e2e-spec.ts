import { Job, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { RECORD_JOB, RecordingHandlers } from '../fixtures/recording.handlers';

const PROMPT_MS = 2_000;

describe('worker: waking up for new jobs', () => {
  let producer: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });

  /** Sessions whose last statement was a LISTEN: a listener's, which sends nothing else. */
  function listeningSessions(): Promise<unknown[]> {
    return producer.dataSource.query(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND query ILIKE 'LISTEN %'`,
    );
  }

  function completedWithin(id: string, timeoutMs: number): Promise<Job> {
    return waitFor(
      async () => {
        const job = await producer.queue.getJob(id);
        return job.status === JobStatus.Completed ? job : undefined;
      },
      { timeoutMs, description: `job ${id} to complete within ${timeoutMs} ms` },
    );
  }

  it('starts a job at once on LISTEN even when it polls only once a minute', async () => {
    const worker = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: { pollIntervalMs: 60_000 } },
      providers: [RecordingHandlers],
    });
    try {
      expect(await listeningSessions()).toHaveLength(1);
      // One after another: each wake-up comes from its own notification, not the startup poll.
      for (let i = 0; i < 3; i++) {
        const job = await producer.queue.enqueue(RECORD_JOB, { i });
        await completedWithin(job.id, PROMPT_MS);
      }
      expect(worker.app.get(RecordingHandlers).ran).toHaveLength(3);
    } finally {
      await worker.close();
    }
  });

  it('still runs jobs by polling with worker.listen false', async () => {
    const worker = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: { listen: false, pollIntervalMs: 100 } },
      providers: [RecordingHandlers],
    });
    try {
      expect(await listeningSessions()).toEqual([]);
      for (let i = 0; i < 3; i++) {
        const job = await producer.queue.enqueue(RECORD_JOB, { i });
        await completedWithin(job.id, PROMPT_MS);
      }
      expect(worker.app.get(RecordingHandlers).ran).toHaveLength(3);
    } finally {
      await worker.close();
    }
  });
});

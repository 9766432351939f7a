import { JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { RECORD_JOB, RecordingHandlers } from '../fixtures/recording.handlers';

// Rows an operator edited by hand into a state the library never writes must not stay stuck.
describe('worker: rows edited by hand', () => {
  let worker: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        worker: { concurrency: 2, pollIntervalMs: 50 },
        staleAfterMs: 1_000,
        heartbeatIntervalMs: 200,
        reaperIntervalMs: 100,
      },
      providers: [RecordingHandlers],
    });
  });

  it("a 'running' row with no heartbeat and no worker is recovered and runs", async () => {
    const [{ id }] = await worker.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, worker_id, heartbeat_at, claimed_at)
       VALUES ($1, 'running', 1, NULL, NULL, now() - interval '1 hour') RETURNING id`,
      [RECORD_JOB],
    );
    const untouched = await worker.queue.enqueue(RECORD_JOB, { n: 1 });

    const job = await waitFor(
      async () => {
        const current = await worker.queue.getJob(String(id));
        return current.status === JobStatus.Completed ? current : undefined;
      },
      { timeoutMs: 10_000, description: 'the hand-edited job to be recovered and completed' },
    );
    expect(job.attempts).toBe(2);
    expect(job.lastError).toMatch(/stopped heartbeating during attempt 1/);
    // The ordinary job next to it ran once, untouched by the recovery.
    const other = await waitFor(async () => {
      const current = await worker.queue.getJob(untouched.id);
      return current.status === JobStatus.Completed ? current : undefined;
    });
    expect(other.attempts).toBe(1);
    expect(other.lastError).toBeNull();
  });
});

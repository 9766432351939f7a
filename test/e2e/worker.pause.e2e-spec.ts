import { JobStatus } from 'nest-pg-job-queue';
import { RecordingHandlers, RECORD_JOB, WITNESS_JOB } from '../fixtures/recording.handlers';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

/**
 * A pause lives in the database, not in a process: paused by an enqueue-only app, it holds for a
 * worker that boots after it and again after that worker restarts, while the worker runs other
 * types; resumed, the waiting job runs.
 */
describe('worker: a pause survives restarts', () => {
  const file = useWorkerTestFile();
  let producer: QueueTestingModule;

  beforeAll(async () => {
    producer = await createQueueTestingModule({ url: file.url });
  });

  afterAll(async () => {
    await producer?.close();
  });

  const startWorker = (): Promise<WorkerApp> =>
    file.start({
      queueOptions: { worker: { concurrency: 2, pollIntervalMs: 20 } },
      providers: [RecordingHandlers],
    });

  /** Runs a witness job to completion on `worker`: its claims since the pause have happened. */
  async function witnessRuns(worker: WorkerApp): Promise<void> {
    const witness = await producer.queue.enqueue(WITNESS_JOB, {});
    await waitFor(
      async () => (await producer.queue.getJob(witness.id)).status === JobStatus.Completed,
      { description: `witness ${witness.id} to complete` },
    );
    expect(worker.app.get(RecordingHandlers).ran).toContainEqual({
      type: WITNESS_JOB,
      id: witness.id,
    });
  }

  it('holds across a worker’s boot and restart, and the job runs once resumed', async () => {
    await producer.queue.pause(RECORD_JOB);
    const held = await producer.queue.enqueue(RECORD_JOB, {});

    const first = await startWorker();
    await witnessRuns(first);
    await first.close();

    const second = await startWorker();
    await witnessRuns(second);
    expect(await producer.queue.getJob(held.id)).toMatchObject({
      status: JobStatus.Pending,
      attempts: 0,
    });
    expect(first.app.get(RecordingHandlers).ran.map((run) => run.type)).not.toContain(RECORD_JOB);
    expect(second.app.get(RecordingHandlers).ran.map((run) => run.type)).not.toContain(RECORD_JOB);
    expect((await producer.queue.stats())[RECORD_JOB]).toMatchObject({ pending: 1, paused: true });

    await producer.queue.resume(RECORD_JOB);
    await waitFor(
      async () => (await producer.queue.getJob(held.id)).status === JobStatus.Completed,
      { description: 'the held job to complete once resumed' },
    );
    expect(second.app.get(RecordingHandlers).ran).toContainEqual({ type: RECORD_JOB, id: held.id });
  });
});

import { Job, JobCancelledError, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { CancelHandlers } from '../fixtures/cancel.handlers';

const HEARTBEAT_INTERVAL_MS = 100;
// The abort comes with the next heartbeat: one interval, plus the statement, plus slack.
/**
 * The failure bound for a running job to see its cancellation: fifty heartbeats. Generous, as a
 * loaded machine needs; the handlers never end on their own, so only the cancel can abort them.
 */
const ABORT_DEADLINE_MS = HEARTBEAT_INTERVAL_MS * 50;

describe('worker: cancelling a running job', () => {
  let worker: WorkerApp;
  let handlers: CancelHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.ignoringGate.open() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
        worker: { concurrency: 4, pollIntervalMs: 20 },
      },
      providers: [CancelHandlers],
    });
    handlers = worker.app.get(CancelHandlers);
  });

  async function startedJob(type: string): Promise<Job> {
    const job = await worker.queue.enqueue(type, {});
    await waitFor(() => handlers.started.has(job.id), { description: `job ${job.id} to start` });
    return job;
  }

  /** Runs a quick job to the end: every outcome queued before it has been written by then. */
  async function workerCaughtUp(): Promise<void> {
    const witness = await worker.queue.enqueue('cancel.quick', {});
    await waitFor(
      async () => (await worker.queue.getJob(witness.id)).status === JobStatus.Completed,
      { description: 'the witness job to complete' },
    );
  }

  it('aborts ctx.signal with JobCancelledError within a heartbeat, and the job stays cancelled', async () => {
    const job = await startedJob('cancel.honours-signal');
    const cancelled = await worker.queue.cancel(job.id);
    expect(cancelled.status).toBe(JobStatus.Cancelled);

    const aborted = await waitFor(() => handlers.aborted.get(job.id), {
      timeoutMs: ABORT_DEADLINE_MS,
      description: 'the handler to see its signal abort',
    });
    expect(aborted.reason).toBeInstanceOf(JobCancelledError);
    expect((aborted.reason as JobCancelledError).jobId).toBe(job.id);

    await workerCaughtUp();
    const after = await worker.queue.getJob(job.id);
    expect(after.status).toBe(JobStatus.Cancelled);
    expect(after.attempts).toBe(1);
    expect(after.result).toBeNull();
    expect(after.lastError).toBeNull();
  });

  it('keeps a job cancelled when its handler ignores the signal and returns later', async () => {
    const job = await startedJob('cancel.ignores-signal');
    await worker.queue.cancel(job.id);
    handlers.ignoringGate.open();
    await waitFor(() => handlers.ignoringReturned.has(job.id), {
      description: 'the handler to return',
    });

    await workerCaughtUp();
    const after = await worker.queue.getJob(job.id);
    expect(after.status).toBe(JobStatus.Cancelled);
    expect(after.result).toBeNull();
  });
});

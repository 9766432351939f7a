import { JobCancelledError, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { CancelHandlers } from '../fixtures/cancel.handlers';

const HEARTBEAT_INTERVAL_MS = 60_000;
/** Well under the heartbeat interval: only the cancel's NOTIFY can beat it. */
const ABORT_DEADLINE_MS = 5_000;

/**
 * `cancel()` on one app reaches a handler running in another app (its own pool and LISTEN
 * connection, as another process would have) at once, not at that worker's next heartbeat.
 */
describe('worker: cancel reaches a handler running elsewhere at once', () => {
  let producer: WorkerApp;
  let worker: WorkerApp;
  let handlers: CancelHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.ignoringGate.open() });

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
    worker = await file.start({
      queueOptions: {
        heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
        staleAfterMs: HEARTBEAT_INTERVAL_MS * 3,
        worker: { concurrency: 4, pollIntervalMs: 20 },
      },
      providers: [CancelHandlers],
    });
    handlers = worker.app.get(CancelHandlers);
  });

  it('aborts ctx.signal with JobCancelledError long before the next heartbeat', async () => {
    const job = await producer.queue.enqueue('cancel.honours-signal', {});
    await waitFor(() => handlers.started.has(job.id), { description: `job ${job.id} to start` });

    const cancelledAt = Date.now();
    expect((await producer.queue.cancel(job.id)).status).toBe(JobStatus.Cancelled);
    const aborted = await waitFor(() => handlers.aborted.get(job.id), {
      timeoutMs: ABORT_DEADLINE_MS,
      description: 'the handler on the other app to see its signal abort',
    });
    console.log(`cancel -> abort on another app: ${aborted.at - cancelledAt} ms`);
    expect(aborted.reason).toBeInstanceOf(JobCancelledError);
    expect((aborted.reason as JobCancelledError).jobId).toBe(job.id);
    expect((await producer.queue.getJob(job.id)).status).toBe(JobStatus.Cancelled);
  });
});

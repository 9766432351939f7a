import { JobStatus, JobWorker, WorkerShutdownError } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { ShutdownHandlers } from '../fixtures/shutdown.handlers';

const CONCURRENCY = 20;
const CLAIMED_NOT_STARTED = 50;
const SHUTDOWN_TIMEOUT_MS = 2_000;
/**
 * The grace period of the drain test: longer than Jest's testTimeout, so a close() that sat it
 * out instead of returning once its jobs finished fails the test, with no clock read here.
 */
const LONG_SHUTDOWN_TIMEOUT_MS = 120_000;

interface Row {
  id: string;
  status: string;
  attempts: number;
  worker_id: string | null;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  result: unknown;
}

describe('worker: graceful shutdown', () => {
  let observer: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    observer = await file.start({ queueOptions: { worker: false } });
  });

  async function rows(ids: string[]): Promise<Row[]> {
    return observer.dataSource.query(
      `SELECT * FROM job_queue.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );
  }

  /**
   * A worker (concurrency 20) running 20 jobs of `jobType` that wait on the gate, plus 50 more jobs
   * it has claimed but not started (claimed by SQL in its name, as a claim cut short would leave).
   */
  async function saturatedWorker(
    jobType: string,
    workerId: string,
    shutdownTimeoutMs = SHUTDOWN_TIMEOUT_MS,
  ) {
    const worker = await startWorkerApp({
      url: file.url,
      queueOptions: {
        workerId,
        shutdownTimeoutMs,
        worker: { concurrency: CONCURRENCY, pollIntervalMs: 50, jobTypes: [jobType] },
      },
      providers: [ShutdownHandlers],
    });
    const handlers = worker.app.get(ShutdownHandlers);
    const running = await observer.queue.enqueueMany(
      Array.from({ length: CONCURRENCY }, (_, i) => ({ type: jobType, data: { i } })),
    );
    await waitFor(() => handlers.started.length === CONCURRENCY, {
      description: `${CONCURRENCY} handlers to start`,
    });
    await waitFor(
      async () => (await rows(running.map((j) => j.id))).every((r) => r.status === 'running'),
      { description: 'the running jobs to be marked running' },
    );

    const waiting = await observer.queue.enqueueMany(
      Array.from({ length: CLAIMED_NOT_STARTED }, (_, i) => ({ type: jobType, data: { i } })),
    );
    const claimed: Array<{ id: string }> = await observer.dataSource.query(
      `SELECT * FROM job_queue.claim_job_batch($1, ARRAY[$2]::text[], $3)`,
      [workerId, jobType, CLAIMED_NOT_STARTED],
    );
    // The worker, full, claimed none of them itself: the SQL claim got all 50.
    expect(claimed.map((r) => String(r.id)).sort()).toEqual(waiting.map((j) => j.id).sort());
    const before = await rows(waiting.map((j) => j.id));
    expect(before.every((r) => r.status === 'claimed' && r.attempts === 1)).toBe(true);
    return {
      worker,
      handlers,
      runningIds: running.map((j) => j.id),
      waitingIds: waiting.map((j) => j.id),
    };
  }

  async function expectNothingHeldBy(workerId: string): Promise<void> {
    const held: Row[] = await observer.dataSource.query(
      `SELECT * FROM job_queue.jobs WHERE worker_id = $1 AND status IN ('claimed', 'running')`,
      [workerId],
    );
    expect(held).toEqual([]);
  }

  function expectHandedBack(released: Row[]): void {
    for (const row of released) {
      expect(row).toMatchObject({
        status: JobStatus.Pending,
        attempts: 0, // as before their claim: leaving is not a failed attempt
        worker_id: null,
        claimed_at: null,
        heartbeat_at: null,
      });
    }
  }

  it('lets running jobs finish within shutdownTimeoutMs and hands back the claimed ones', async () => {
    const workerId = 'shutdown-drain-worker';
    const { worker, handlers, runningIds, waitingIds } = await saturatedWorker(
      'shutdown.drain',
      workerId,
      LONG_SHUTDOWN_TIMEOUT_MS,
    );
    const jobWorker = worker.app.get(JobWorker);

    let closed = false;
    const closing = worker.close().then(() => (closed = true));
    // The worker has stopped claiming and is draining: close() waits for the held jobs.
    await waitFor(() => !jobWorker.isRunning, { description: 'the worker to start draining' });
    expect(closed).toBe(false);
    handlers.gate.open();
    // close() returns once they finished, not after the (longer than testTimeout) grace period.
    await closing;

    expect(handlers.finished.sort()).toEqual([...runningIds].sort());
    expect(handlers.abortReasons).toEqual([]);
    for (const row of await rows(runningIds)) {
      expect(row).toMatchObject({ status: JobStatus.Completed, attempts: 1 });
      expect(row.result).toEqual({ finished: row.id });
    }
    expectHandedBack(await rows(waitingIds));
    await expectNothingHeldBy(workerId);
  });

  it('aborts jobs still running after shutdownTimeoutMs and hands everything back', async () => {
    const workerId = 'shutdown-abort-worker';
    const { worker, handlers, runningIds, waitingIds } = await saturatedWorker(
      'shutdown.abort',
      workerId,
    );

    const closeStarted = Date.now();
    await worker.close(); // the gate never opens
    const closeTook = Date.now() - closeStarted;

    expect(closeTook).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 10);
    expect(handlers.finished).toEqual([]);
    expect(handlers.abortReasons).toHaveLength(CONCURRENCY);
    for (const reason of handlers.abortReasons) {
      expect(reason).toBeInstanceOf(WorkerShutdownError);
    }
    expectHandedBack(await rows(runningIds));
    expectHandedBack(await rows(waitingIds));
    await expectNothingHeldBy(workerId);
    handlers.gate.open();
  });
});

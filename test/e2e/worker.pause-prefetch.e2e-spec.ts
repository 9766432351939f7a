import { JobQueueModuleOptions, JobStatus } from 'nest-pg-job-queue';
import { ConcurrencyHandlers, FREE_JOB } from '../fixtures/concurrency.handlers';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const PREFETCH = 10;
/** Jobs beyond what the worker holds: never claimed. */
const UNCLAIMED = 4;

/**
 * A pause reaches the jobs a worker holds and has not started (prefetched): they are handed back,
 * their attempt given back, and none of them starts after the pause reached that node. The
 * pausing node has done so before `pause()` resolves; another node does on the notification, or
 * at its next heartbeat with LISTEN off.
 */
describe('worker: pause reaches prefetched jobs', () => {
  let producer: WorkerApp;
  let worker: WorkerApp | undefined;
  let handlers: ConcurrencyHandlers | undefined;

  const file = useWorkerTestFile({
    beforeClose: async () => {
      handlers?.gate.open();
      await worker?.close();
    },
  });

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });

  afterEach(async () => {
    handlers?.gate.open();
    await worker?.close();
    worker = undefined;
    handlers = undefined;
    await producer.queue.resume(FREE_JOB);
    await producer.dataSource.query(`DELETE FROM job_queue.jobs`);
  });

  /** Boots a worker (one slot, `PREFETCH` held) with its gate shut, holding 1 + PREFETCH jobs. */
  async function holdingWorker(
    options: JobQueueModuleOptions,
  ): Promise<{ app: WorkerApp; probe: ConcurrencyHandlers }> {
    await producer.queue.enqueueMany(
      Array.from({ length: 1 + PREFETCH + UNCLAIMED }, (_, i) => ({ type: FREE_JOB, data: { i } })),
    );
    const app = await startWorkerApp({
      url: file.url,
      queueOptions: {
        ...options,
        worker: {
          concurrency: 1,
          prefetch: PREFETCH,
          pollIntervalMs: 20,
          ...(options.worker || {}),
        },
      },
      providers: [ConcurrencyHandlers],
    });
    worker = app;
    const probe = app.app.get(ConcurrencyHandlers);
    handlers = probe;
    await waitFor(async () => (await heldBy(app.workerId)) === PREFETCH + 1, {
      description: 'one running and ten prefetched jobs held by the worker',
    });
    expect(probe.started).toHaveLength(1);
    return { app, probe };
  }

  const heldBy = async (workerId: string): Promise<number> =>
    Number(
      (
        await producer.dataSource.query(
          `SELECT count(*) AS n FROM job_queue.jobs
           WHERE worker_id = $1 AND status IN ('claimed', 'running')`,
          [workerId],
        )
      )[0].n,
    );

  /** Jobs back in the queue with their attempt given back. */
  const handedBack = async (): Promise<number> =>
    Number(
      (
        await producer.dataSource.query(
          `SELECT count(*) AS n FROM job_queue.jobs WHERE status = 'pending' AND attempts = 0`,
        )
      )[0].n,
    );

  /** Lets the running job finish; no held job may start after it (the slot frees first). */
  async function finishRunningJob(app: WorkerApp, probe: ConcurrencyHandlers): Promise<void> {
    const [running] = probe.started;
    probe.gate.open();
    await waitFor(async () => (await app.queue.getJob(running)).status === JobStatus.Completed, {
      description: `the running job ${running} to complete`,
    });
    expect(probe.started).toEqual([running]);
    expect(await heldBy(app.workerId)).toBe(0);
  }

  it('on the pausing node: held jobs are handed back before pause() resolves', async () => {
    const { app, probe } = await holdingWorker({});
    await app.queue.pause(FREE_JOB);
    // The held and the unclaimed wait, with no attempt spent.
    expect(await handedBack()).toBe(PREFETCH + UNCLAIMED);
    expect(await heldBy(app.workerId)).toBe(1);
    await finishRunningJob(app, probe);
  });

  it('on another node, by notification', async () => {
    const { app, probe } = await holdingWorker({
      // No heartbeat during the test: only the notification can tell this node.
      staleAfterMs: 3_600_000,
      heartbeatIntervalMs: 1_200_000,
    });
    await producer.queue.pause(FREE_JOB);
    await waitFor(async () => (await handedBack()) === PREFETCH + UNCLAIMED, {
      description: 'the other node to hand its prefetched jobs back',
    });
    await finishRunningJob(app, probe);
  });

  it('on another node with LISTEN off, at its next heartbeat', async () => {
    const { app, probe } = await holdingWorker({
      worker: { listen: false },
      heartbeatIntervalMs: 200,
    });
    await producer.queue.pause(FREE_JOB);
    await waitFor(async () => (await handedBack()) === PREFETCH + UNCLAIMED, {
      description: 'the other node to hand its prefetched jobs back at a heartbeat',
    });
    await finishRunningJob(app, probe);
  });
});

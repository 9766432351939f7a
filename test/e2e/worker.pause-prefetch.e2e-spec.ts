import { JobQueueModuleOptions, JobStatus } from 'nest-pg-job-queue';
import { FREE_JOB } from '../fixtures/concurrency.handlers';
import { waitFor } from '../support/wait-for';
import { GatedWorker, useGatedWorkerFile } from '../support/gated-worker';

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
  const file = useGatedWorkerFile();

  afterEach(async () => {
    await file.producer.queue.resume(FREE_JOB);
  });

  /** Boots a worker (one slot, `PREFETCH` held) with its gate shut, holding 1 + PREFETCH jobs. */
  async function holdingWorker(options: JobQueueModuleOptions): Promise<GatedWorker> {
    await file.producer.queue.enqueueMany(
      Array.from({ length: 1 + PREFETCH + UNCLAIMED }, (_, i) => ({ type: FREE_JOB, data: { i } })),
    );
    const worker = await file.start({
      ...options,
      worker: { concurrency: 1, prefetch: PREFETCH, pollIntervalMs: 20, ...(options.worker || {}) },
    });
    await waitFor(async () => (await file.heldBy(worker.workerId)) === PREFETCH + 1, {
      description: 'one running and ten prefetched jobs held by the worker',
    });
    expect(worker.probe.started).toHaveLength(1);
    return worker;
  }

  /** Jobs back in the queue with their attempt given back. */
  const handedBack = async (): Promise<number> =>
    Number(
      (
        await file.producer.dataSource.query(
          `SELECT count(*) AS n FROM job_queue.jobs WHERE status = 'pending' AND attempts = 0`,
        )
      )[0].n,
    );

  /** Lets the running job finish; no held job may start after it (the slot frees first). */
  async function finishRunningJob({ app, probe }: GatedWorker): Promise<void> {
    const [running] = probe.started;
    probe.gate.open();
    await waitFor(async () => (await app.queue.getJob(running)).status === JobStatus.Completed, {
      description: `the running job ${running} to complete`,
    });
    expect(probe.started).toEqual([running]);
    expect(await file.heldBy(app.workerId)).toBe(0);
  }

  it('on the pausing node: held jobs are handed back before pause() resolves', async () => {
    const worker = await holdingWorker({});
    await worker.app.queue.pause(FREE_JOB);
    // The held and the unclaimed wait, with no attempt spent.
    expect(await handedBack()).toBe(PREFETCH + UNCLAIMED);
    expect(await file.heldBy(worker.workerId)).toBe(1);
    await finishRunningJob(worker);
  });

  it('on another node, by notification', async () => {
    const worker = await holdingWorker({
      // No heartbeat during the test: only the notification can tell this node.
      staleAfterMs: 3_600_000,
      heartbeatIntervalMs: 1_200_000,
    });
    await file.producer.queue.pause(FREE_JOB);
    await waitFor(async () => (await handedBack()) === PREFETCH + UNCLAIMED, {
      description: 'the other node to hand its prefetched jobs back',
    });
    await finishRunningJob(worker);
  });

  it('on another node with LISTEN off, at its next heartbeat', async () => {
    const worker = await holdingWorker({
      worker: { listen: false },
      heartbeatIntervalMs: 200,
    });
    await file.producer.queue.pause(FREE_JOB);
    await waitFor(async () => (await handedBack()) === PREFETCH + UNCLAIMED, {
      description: 'the other node to hand its prefetched jobs back at a heartbeat',
    });
    await finishRunningJob(worker);
  });
});

import { EnqueueManyItem, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BUSY_JOB,
  FREE_JOB,
  LIMITED_JOB,
  PriorityHandlers,
  WAITING_JOB,
} from '../fixtures/priority.handlers';

type Item = EnqueueManyItem<{ label: string }>;

const jobs = (type: string, priority: number, labels: string[]): Item[] =>
  labels.map((label) => ({ type, data: { label }, priority }));

/**
 * One priority order across every type a worker claims (priority DESC, created_at, id): a type
 * with a `concurrency` of its own is skipped while at its limit, but neither jumps the queue nor
 * waits behind other types' lower-priority backlog while it has a free slot.
 */
describe('worker: one priority order across job types', () => {
  let producer: WorkerApp;
  let worker: WorkerApp | undefined;

  const file = useWorkerTestFile({ beforeClose: () => worker?.close() });

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });

  afterEach(async () => {
    await worker?.close();
    worker = undefined;
  });

  /** Enqueues `items` (one statement: one created_at), then runs them all on one slot. */
  async function runOrderOf(items: Item[]): Promise<string[]> {
    await producer.queue.enqueueMany(items);
    worker = await startWorkerApp({
      url: file.url,
      // Each claim's order, one job at a time: nothing held ahead of the slot (prefetch: 0),
      // where a held job keeps its place until the next claim (README, "Prefetch").
      queueOptions: { worker: { concurrency: 1, prefetch: 0, pollIntervalMs: 20 } },
      providers: [PriorityHandlers],
    });
    const handlers = worker.app.get(PriorityHandlers);
    await waitFor(() => handlers.runOrder.length === items.length, {
      description: `${items.length} jobs to run`,
    });
    await waitFor(
      async () => {
        const [{ open }] = await producer.dataSource.query(
          `SELECT count(*)::int AS open FROM job_queue.jobs WHERE status <> $1`,
          [JobStatus.Completed],
        );
        return open === 0;
      },
      { description: 'every job completed' },
    );
    return handlers.runOrder;
  }

  it('runs priority-500 jobs of an unlimited type before priority-1 jobs of a limited one', async () => {
    const order = await runOrderOf([
      ...jobs(LIMITED_JOB, 1, ['limited-1', 'limited-2', 'limited-3']),
      ...jobs(FREE_JOB, 500, ['free-1', 'free-2', 'free-3']),
    ]);
    expect(order).toEqual(['free-1', 'free-2', 'free-3', 'limited-1', 'limited-2', 'limited-3']);
  });

  it('does not starve a limited type behind another limited type’s lower-priority backlog', async () => {
    const order = await runOrderOf([
      ...jobs(BUSY_JOB, 10, ['busy-1', 'busy-2', 'busy-3']),
      ...jobs(FREE_JOB, 5, ['free-1', 'free-2']),
      ...jobs(WAITING_JOB, 50, ['waiting-1']),
    ]);
    expect(order).toEqual(['waiting-1', 'busy-1', 'busy-2', 'busy-3', 'free-1', 'free-2']);
  });

  it('starts a better job enqueued mid-backlog next, of its own type or another (claims resume after cursors)', async () => {
    const backlog = Array.from({ length: 300 }, (_, i) => `backlog-${i}`);
    await producer.queue.enqueueMany(jobs(FREE_JOB, 5, backlog));
    worker = await startWorkerApp({
      url: file.url,
      // Each claim's order, one job at a time: nothing held ahead of the slot (prefetch: 0),
      // where a held job keeps its place until the next claim (README, "Prefetch").
      queueOptions: { worker: { concurrency: 1, prefetch: 0, pollIntervalMs: 20 } },
      providers: [PriorityHandlers],
    });
    const handlers = worker.app.get(PriorityHandlers);
    // The worker claims one job at a time: after the first few, its claims resume after its
    // cursor at priority 5, not from the head.
    await waitFor(() => handlers.runOrder.length >= 10, { description: '10 backlog jobs to run' });
    // Both in one statement, so both are committed when it returns; backlog jobs keep running
    // while it is sent, so what ran is counted only once they are committed.
    await producer.queue.enqueueMany([
      { type: FREE_JOB, data: { label: 'urgent-same-type' }, priority: 50 },
      { type: WAITING_JOB, data: { label: 'urgent-other-type' }, priority: 40 },
    ]);
    const ranBefore = handlers.runOrder.length;
    await waitFor(() => handlers.runOrder.includes('urgent-other-type'), {
      description: 'the urgent jobs to run',
    });
    const order = [...handlers.runOrder];
    // The claim in flight at the commit may still take a backlog job; then the better jobs,
    // best first, long before the backlog's end.
    const same = order.indexOf('urgent-same-type');
    expect(same - ranBefore).toBeLessThanOrEqual(2);
    expect(order.indexOf('urgent-other-type')).toBeGreaterThan(same);
    expect(order.indexOf('urgent-other-type') - same).toBeLessThanOrEqual(2);
    expect(order.length).toBeLessThan(backlog.length);
  });
});

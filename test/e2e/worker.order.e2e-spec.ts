import { JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { ORDER_JOB, OrderHandlers } from '../fixtures/order.handlers';

const JOB_COUNT = 50;
const PRIORITIES = [0, 100, 250, -10, 100, 50, 250];

describe('worker: run order', () => {
  let producer: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });

  it('runs jobs enqueued before it started by priority DESC, then created_at, then id', async () => {
    const jobs = await producer.queue.enqueueMany(
      Array.from({ length: JOB_COUNT }, (_, i) => ({
        type: ORDER_JOB,
        data: { i },
        priority: PRIORITIES[i % PRIORITIES.length],
      })),
    );
    // One insert gives every row the same created_at: spread them over ten instants, with ties
    // and not in id order, so each key of the order (priority, created_at, id) decides somewhere.
    const createdOffsetS = jobs.map((_, i) => (i * 7) % 10);
    await producer.dataSource.query(
      `UPDATE job_queue.jobs SET created_at = now() - interval '1 hour' + o.s * interval '1 second'
       FROM unnest($1::bigint[], $2::integer[]) AS o(id, s) WHERE jobs.id = o.id`,
      [jobs.map((job) => job.id), createdOffsetS],
    );
    const expected = jobs
      .map((job, i) => ({ id: job.id, priority: job.priority, offset: createdOffsetS[i] }))
      .sort((a, b) => b.priority - a.priority || a.offset - b.offset || Number(a.id) - Number(b.id))
      .map((job) => job.id);
    // Sanity: the expected order differs from both insertion order and a priority-only sort.
    expect(expected).not.toEqual(jobs.map((job) => job.id));

    const worker = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: { concurrency: 1, pollIntervalMs: 50 } },
      providers: [OrderHandlers],
    });
    const handlers = worker.app.get(OrderHandlers);
    await waitFor(() => handlers.runOrder.length === JOB_COUNT, {
      description: `${JOB_COUNT} jobs to run`,
    });
    await waitFor(
      async () => (await producer.queue.stats({ maxAgeMs: 0 }))[ORDER_JOB]?.completed === JOB_COUNT,
      {
        description: 'every job completed',
      },
    );
    await worker.close();

    expect(handlers.runOrder).toEqual(expected);
    const rows: Array<{ id: string; attempts: number; status: string }> =
      await producer.dataSource.query(
        `SELECT id, attempts, status FROM job_queue.jobs ORDER BY id`,
      );
    expect(rows.every((row) => row.status === JobStatus.Completed && row.attempts === 1)).toBe(
      true,
    );
  });
});

import { EnqueueManyItem, Job } from 'nest-pg-job-queue';
import { QueryCounter } from '../support/query-counter';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService.enqueueMany', () => {
  const counter = new QueryCounter();
  const app = useQueueTestingModule({ typeOrmOptions: { logger: counter } });

  /** The statements `fn` sends, and its result. */
  async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
    counter.reset();
    const result = await fn();
    return { result, queries: [...counter.queries] };
  }

  it('inserts 10,000 jobs in ONE statement and returns them in input order', async () => {
    const items: EnqueueManyItem<{ seq: number; label: string }>[] = Array.from(
      { length: 10_000 },
      (_, seq) => ({
        type: seq % 2 === 0 ? 'bulk_even' : 'bulk_odd',
        data: { seq, label: `item-${seq}` },
        priority: seq % 7,
        // Keys that clash with nothing cost no extra round trip either.
        ...(seq % 100 === 0 ? { uniqueKey: `bulk-${seq}` } : {}),
      }),
    );

    const { result: jobs, queries } = await counted(() => app.queue.enqueueMany(items));

    expect(queries).toHaveLength(1);
    expect(queries[0]).toMatch(/INSERT INTO "job_queue"\.jobs/);
    expect(jobs).toHaveLength(10_000);
    expect(jobs.every((job) => job instanceof Job)).toBe(true);
    expect(jobs.map((job) => job.data)).toEqual(items.map((item) => item.data));
    expect(jobs.map((job) => [job.jobType, job.priority])).toEqual(
      items.map((item) => [item.type, item.priority]),
    );
    expect(new Set(jobs.map((job) => job.id)).size).toBe(10_000);

    const [{ count, distinct_seq }] = await app.dataSource.query(
      `SELECT count(*)::int AS count, count(DISTINCT (data->>'seq'))::int AS distinct_seq
       FROM job_queue.jobs WHERE job_type IN ('bulk_even', 'bulk_odd')`,
    );
    expect({ count, distinct_seq }).toEqual({ count: 10_000, distinct_seq: 10_000 });

    // Every returned job is the row stored under its id.
    const stored: Array<{ id: string; seq: number }> = await app.dataSource.query(
      `SELECT id, (data->>'seq')::int AS seq FROM job_queue.jobs WHERE job_type IN ('bulk_even', 'bulk_odd')`,
    );
    const seqById = new Map(stored.map((row) => [row.id, row.seq]));
    expect(jobs.map((job) => seqById.get(job.id))).toEqual(items.map((item) => item.data.seq));
  });

  it('draws ids in input order, so same-priority jobs of one batch are claimed FIFO', async () => {
    const jobs = await app.queue.enqueueMany(
      Array.from({ length: 50 }, (_, seq) => ({ type: 'bulk_fifo', data: seq })),
    );
    const ids = jobs.map((job) => BigInt(job.id));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);
  });

  it('applies per-item options, each to its own job', async () => {
    const runAt = new Date(Date.now() + 3_600_000);
    const jobs = await app.queue.enqueueMany([
      { type: 'bulk_opts', data: 'a' },
      { type: 'bulk_opts', data: 'b', priority: 7, maxAttempts: 9, runAt },
      { type: 'bulk_opts', data: 'c', delayMs: 60_000, uniqueKey: 'bulk-opts-c' },
      { type: 'bulk_opts', data: 'd', concurrencyKey: 'tenant-1' },
      { type: 'bulk_opts', data: 'e', concurrencyKey: 'tenant-2', uniqueKey: 'bulk-opts-e' },
    ]);

    expect(jobs.map((job) => job.data)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(jobs[0]).toMatchObject({
      priority: 100,
      maxAttempts: null,
      uniqueKey: null,
      concurrencyKey: null,
    });
    expect(jobs[1]).toMatchObject({ priority: 7, maxAttempts: 9 });
    expect(jobs[1].runAt.getTime()).toBe(runAt.getTime());
    expect(jobs[2].uniqueKey).toBe('bulk-opts-c');
    expect(jobs[2].runAt.getTime() - jobs[2].createdAt.getTime()).toBe(60_000);
    expect(jobs.map((job) => job.concurrencyKey)).toEqual([
      null,
      null,
      null,
      'tenant-1',
      'tenant-2',
    ]);
    const stored: Array<{ data: string; concurrency_key: string | null }> =
      await app.dataSource.query(
        `SELECT data, concurrency_key FROM job_queue.jobs WHERE job_type = 'bulk_opts' ORDER BY id`,
      );
    expect(stored.map((row) => [row.data, row.concurrency_key])).toEqual([
      ['a', null],
      ['b', null],
      ['c', null],
      ['d', 'tenant-1'],
      ['e', 'tenant-2'],
    ]);
  });

  it('returns each job exactly as stored, field for field (getJob reads the same)', async () => {
    const runAt = new Date('2031-05-06T07:08:09.123Z');
    const jobs = await app.queue.enqueueMany<unknown>([
      { type: 'bulk_exact', data: null },
      { type: 'bulk_exact', data: { b: 1, a: [true, 'x"y\\z'], nested: { ключ: '✓' } } },
      { type: 'bulk_exact', data: 'text', priority: -3, maxAttempts: 4, runAt },
      { type: 'bulk_exact', data: 42, delayMs: 1_500, uniqueKey: 'bulk-exact-key' },
      { type: 'bulk_exact', data: [], concurrencyKey: 'tenant-"ключ"\\' },
    ]);
    for (const job of jobs) expect(job).toEqual(await app.queue.getJob(job.id));
  });

  it('duplicates of one uniqueKey inside a batch return the same job at every position', async () => {
    const { result: jobs } = await counted(() =>
      app.queue.enqueueMany([
        { type: 'bulk_unique', data: 'first', uniqueKey: 'batch-key' },
        { type: 'bulk_unique', data: 'no key' },
        { type: 'bulk_unique', data: 'second', uniqueKey: 'batch-key' },
        { type: 'bulk_unique', data: 'other key', uniqueKey: 'batch-key-2' },
        { type: 'bulk_unique', data: 'third', uniqueKey: 'batch-key' },
      ]),
    );

    expect(jobs[2].id).toBe(jobs[0].id);
    expect(jobs[4].id).toBe(jobs[0].id);
    // The first occurrence wins.
    expect(jobs[0].data).toBe('first');
    expect(jobs[2].data).toBe('first');
    expect(new Set([jobs[0].id, jobs[1].id, jobs[3].id]).size).toBe(3);
    expect(jobs.map((job) => job.data)).toEqual(['first', 'no key', 'first', 'other key', 'first']);

    const [{ count }] = await app.dataSource.query(
      `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type = 'bulk_unique'`,
    );
    expect(count).toBe(3);
  });

  it('an item whose key an existing unfinished job holds resolves to that job', async () => {
    const holder = await app.queue.enqueue(
      'bulk_held',
      { holder: true },
      { uniqueKey: 'held-key' },
    );

    const jobs = await app.queue.enqueueMany([
      { type: 'bulk_held', data: { holder: false }, uniqueKey: 'held-key' },
      { type: 'bulk_held', data: { fresh: true } },
    ]);

    expect(jobs[0].id).toBe(holder.id);
    expect(jobs[0].data).toEqual({ holder: true });
    expect(jobs[1].id).not.toBe(holder.id);
    expect(jobs[1].data).toEqual({ fresh: true });
  });

  it('an empty array is a no-op without a round trip', async () => {
    const { result, queries } = await counted(() => app.queue.enqueueMany([]));
    expect(result).toEqual([]);
    expect(queries).toHaveLength(0);
  });
});

import { Client } from 'pg';
import { InvalidJobInputError } from 'nest-pg-job-queue';
import { JobStatsRefresher } from '../../libs/job-queue/src/maintenance/job-stats-refresher';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { QueryCounter } from '../support/query-counter';
import { sqlOn, TestSql } from '../support/roles';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const STATS_LOCK_KEY = queueSchema('job_queue').lockKey('stats');

interface SnapshotRow {
  counts: Record<string, Record<string, number>>;
  refreshed_at: Date;
  count_ms: number;
}

describe('QueueService.stats(): a snapshot refreshed in the background, exact on request', () => {
  const file = useWorkerTestFile();
  let sql: TestSql;

  /** The stored snapshot, as the table holds it. */
  const snapshot = async (): Promise<SnapshotRow | undefined> =>
    (await sql<SnapshotRow>(`SELECT counts, refreshed_at, count_ms FROM job_queue.job_stats`))[0];

  /** Makes the stored snapshot `ms` older than it is (and, when given, its count that long). */
  const age = (ms: number, countMs?: number) =>
    sql(
      `UPDATE job_queue.job_stats SET refreshed_at = refreshed_at - $1::float8 * interval '1 ms',
                                      count_ms = COALESCE($2::float8, count_ms)`,
      [ms, countMs ?? null],
    );

  /** How many times the snapshot row has been written, by a trigger of this test's own. */
  const writes = async (): Promise<number> =>
    (await sql<{ n: number }>(`SELECT n FROM stats_writes`))[0].n;

  let producer: WorkerApp;
  const queries = new QueryCounter();

  beforeAll(async () => {
    sql = sqlOn(file.url);
    await sql(`CREATE TABLE stats_writes (n integer NOT NULL)`);
    await sql(`INSERT INTO stats_writes VALUES (0)`);
    await sql(`CREATE FUNCTION count_stats_write() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN UPDATE stats_writes SET n = n + 1; RETURN NULL; END $$`);
    await sql(`CREATE TRIGGER count_stats_write AFTER INSERT OR UPDATE ON job_queue.job_stats
               FOR EACH ROW EXECUTE FUNCTION count_stats_write()`);
    // An enqueue-only app: no refresher of its own, so every count here is stats()'s.
    producer = await file.start({
      queueOptions: { worker: false, statsIntervalMs: 1_000 },
      queryLogger: queries,
    });
  });

  beforeEach(async () => {
    await sql(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_stats`);
  });

  it('counts by itself when there is no snapshot yet, and stores what it counted', async () => {
    await producer.queue.enqueue('a', {});
    await producer.queue.enqueue('b', {}, { delayMs: 3_600_000 });
    const blocked = await producer.queue.enqueue('b', {});
    await sql(
      `UPDATE job_queue.jobs SET status = 'blocked', unfinished_dependencies = 1,
                                 on_dependency_failure = 'fail' WHERE id = $1`,
      [blocked.id],
    );
    expect(await snapshot()).toBeUndefined();

    const stats = await producer.queue.stats();

    expect(stats).toEqual({
      a: {
        scheduled: 0,
        pending: 1,
        waiting: 0,
        blocked: 0,
        claimed: 0,
        running: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        paused: false,
      },
      b: {
        scheduled: 1,
        pending: 0,
        waiting: 0,
        blocked: 1,
        claimed: 0,
        running: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        paused: false,
      },
    });
    expect(await snapshot()).toMatchObject({
      counts: { a: { pending: 1 }, b: { scheduled: 1, blocked: 1 } },
      count_ms: expect.any(Number),
    });
  });

  it('serves the snapshot while it is at most maxAgeMs old, and counts again once older', async () => {
    await producer.queue.enqueue('a', {});
    expect((await producer.queue.stats({ maxAgeMs: 0 })).a.pending).toBe(1);
    const first = (await snapshot())!;
    await producer.queue.enqueue('a', {});

    // Written a moment ago: served, though a job was added since.
    expect((await producer.queue.stats({ maxAgeMs: 60_000 })).a.pending).toBe(1);
    expect((await snapshot())!.refreshed_at).toEqual(first.refreshed_at);

    // Two minutes old: counted again and stored.
    await age(120_000);
    expect((await producer.queue.stats({ maxAgeMs: 60_000 })).a.pending).toBe(2);
    const second = (await snapshot())!;
    expect(second.counts).toEqual({ a: { pending: 2 } });
    expect(second.refreshed_at.getTime()).toBeGreaterThan(first.refreshed_at.getTime() - 120_000);
  });

  it('by default, accepts a snapshot three refresher waits old: max(statsIntervalMs, 10 × its count)', async () => {
    await producer.queue.enqueue('a', {});
    await producer.queue.stats({ maxAgeMs: 0 });
    await producer.queue.enqueue('a', {});

    // statsIntervalMs is 1000 and the count was quick: fresh for 3 s.
    await age(2_000, 1);
    expect((await producer.queue.stats()).a.pending).toBe(1);
    await age(2_000); // 4 s
    expect((await producer.queue.stats()).a.pending).toBe(2);

    // A count that took 500 ms: the refresher waits 5 s, so a snapshot is fresh for 15 s.
    await producer.queue.enqueue('a', {});
    await age(14_000, 500);
    expect((await producer.queue.stats()).a.pending).toBe(2);
    await age(2_000); // 16 s
    expect((await producer.queue.stats()).a.pending).toBe(3);
  });

  it('maxAgeMs 0 counts exactly, after the call, even while an older count is on its way', async () => {
    await producer.queue.enqueue('a', {});
    await producer.queue.stats({ maxAgeMs: 0 }); // a row to hold
    // Hold the snapshot row: a count reads the table, then waits here to store its result.
    const holder = new Client({ connectionString: file.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM job_queue.job_stats FOR UPDATE`);
      const waiting = () =>
        sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        ).then(([row]) => row.n);

      const before = producer.queue.stats({ maxAgeMs: 0 });
      await waitFor(async () => (await waiting()) === 1, { description: 'the first count' });
      await producer.queue.enqueue('a', {});
      const after = producer.queue.stats({ maxAgeMs: 0 });
      await waitFor(async () => (await waiting()) === 2, { description: 'a second count' });
      await holder.query('COMMIT');

      expect((await before).a.pending).toBe(1);
      expect((await after).a.pending).toBe(2);
    } finally {
      await holder.end();
    }
    expect((await snapshot())!.counts).toEqual({ a: { pending: 2 } });
  });

  it('shares one count among 400 parallel calls (single flight), exact or not', async () => {
    await producer.queue.enqueueMany(Array.from({ length: 7 }, () => ({ type: 'a', data: {} })));
    await sql(`UPDATE stats_writes SET n = 0`);

    const exact = await Promise.all(
      Array.from({ length: 400 }, () => producer.queue.stats({ maxAgeMs: 0 })),
    );
    expect(new Set(exact.map((stats) => stats.a.pending))).toEqual(new Set([7]));
    expect(await writes()).toBe(1);

    // No snapshot: one read of it, one count, for all of them.
    await sql(`TRUNCATE job_queue.job_stats`);
    await sql(`UPDATE stats_writes SET n = 0`);
    queries.reset();
    const cold = await Promise.all(Array.from({ length: 400 }, () => producer.queue.stats()));
    expect(new Set(cold.map((stats) => stats.a.pending))).toEqual(new Set([7]));
    expect(await writes()).toBe(1);
    expect(queries.queries.filter((query) => /job_stats/.test(query))).toHaveLength(2);

    // A fresh snapshot: one read of it and one of the paused types, no count.
    queries.reset();
    const warm = await Promise.all(Array.from({ length: 400 }, () => producer.queue.stats()));
    expect(new Set(warm.map((stats) => stats.a.pending))).toEqual(new Set([7]));
    expect(await writes()).toBe(1);
    expect(queries.queries).toHaveLength(2);
    expect(queries.queries.filter((query) => /job_stats/.test(query))).toHaveLength(1);
    expect(queries.queries.filter((query) => /job_types/.test(query))).toHaveLength(1);
  });

  it('keeps counts right in an enqueue-only app: past maxAgeMs it counts again by itself', async () => {
    const quick = await file.start({ queueOptions: { worker: false, statsIntervalMs: 50 } });
    await quick.queue.enqueue('a', {});
    expect((await quick.queue.stats()).a.pending).toBe(1);
    await quick.queue.enqueue('a', {});
    await quick.queue.enqueue('a', {});
    // Default freshness 150 ms, and no worker refreshes anything: the count is stats()'s own.
    await waitFor(async () => (await quick.queue.stats()).a.pending === 3, {
      description: 'stats() to count the three jobs',
    });
    await quick.close();
  });

  it.each([
    ['maxAgeMs -1', { maxAgeMs: -1 }, 'maxAgeMs'],
    ['maxAgeMs 1.5', { maxAgeMs: 1.5 }, 'maxAgeMs'],
    ['maxAgeMs "0"', { maxAgeMs: '0' }, 'maxAgeMs'],
    ['an unknown option', { maxAge: 0 }, 'maxAge'],
    ['options null', null, 'options'],
  ])(
    'refuses %s with an InvalidJobInputError naming it, sending nothing',
    async (_, opts, field) => {
      queries.reset();
      const error = await producer.queue
        .stats(opts as unknown as { maxAgeMs?: number })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidJobInputError);
      expect(error).toMatchObject({ field });
      expect(queries.count).toBe(0);
    },
  );

  describe('the refresher', () => {
    let nodes: WorkerApp[];
    const refresher = (node: WorkerApp) => node.app.get(JobStatsRefresher);

    beforeAll(async () => {
      // Two worker nodes whose refreshers run only when the test says (autoStart: false).
      nodes = await Promise.all(
        [1, 2].map(() =>
          file.start({ queueOptions: { worker: { autoStart: false }, statsIntervalMs: 1_000 } }),
        ),
      );
    });

    it('counts when no snapshot exists or it is due, and not otherwise', async () => {
      await producer.queue.enqueue('a', {});
      expect(await refresher(nodes[0]).refreshOnce()).toMatchObject({
        counts: { a: { pending: 1 } },
      });
      await producer.queue.enqueue('a', {});
      // Just counted, by either node: not due.
      expect(await refresher(nodes[0]).refreshOnce()).toBeUndefined();
      expect(await refresher(nodes[1]).refreshOnce()).toBeUndefined();
      expect((await snapshot())!.counts).toEqual({ a: { pending: 1 } });
      // Older than statsIntervalMs: due.
      await age(1_500, 1);
      expect(await refresher(nodes[1]).refreshOnce()).toMatchObject({
        counts: { a: { pending: 2 } },
      });
    });

    it('waits ten times as long as the last count took when that is longer than statsIntervalMs', async () => {
      await refresher(nodes[0]).refreshOnce();
      await age(4_000, 500); // the next is due 5 s after a count of 500 ms
      expect(await refresher(nodes[0]).refreshOnce()).toBeUndefined();
      await age(1_500);
      expect(await refresher(nodes[0]).refreshOnce()).toBeDefined();
    });

    it('never counts while another node holds the stats lock', async () => {
      await producer.queue.enqueue('a', {});
      const holder = new Client({ connectionString: file.url });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1::bigint)', [STATS_LOCK_KEY]);
        // Due (no snapshot), but locked: neither node counts.
        expect(await Promise.all(nodes.map((node) => refresher(node).refreshOnce()))).toEqual([
          undefined,
          undefined,
        ]);
        expect(await snapshot()).toBeUndefined();
        await holder.query('SELECT pg_advisory_unlock($1::bigint)', [STATS_LOCK_KEY]);
      } finally {
        await holder.end();
      }
      expect(await refresher(nodes[1]).refreshOnce()).toMatchObject({
        counts: { a: { pending: 1 } },
      });
    });

    it('runs on its timer once the worker starts', async () => {
      const node = await file.start({ queueOptions: { statsIntervalMs: 100 } });
      await producer.queue.enqueue('a', {});
      const first = await waitFor(snapshot, { description: 'a first snapshot' });
      await producer.queue.enqueue('a', {});
      await waitFor(async () => (await snapshot())!.counts.a?.pending === 2, {
        description: 'a refresh that counts the second job',
      });
      expect((await snapshot())!.refreshed_at.getTime()).toBeGreaterThan(
        first.refreshed_at.getTime(),
      );
      await node.close();
    });
  });
});

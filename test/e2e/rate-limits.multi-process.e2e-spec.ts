import { CREATE_LIMIT_RUNS_TABLE } from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

const WORKER_IDS = ['rate-worker-1', 'rate-worker-2', 'rate-worker-3'];
const CONCURRENCY = 10;
const DEADLINE_MS = 60_000;

/**
 * Rate limits across three worker processes, checked from each handler's start as the database's
 * clock recorded it (`limit_runs.started_at`, the handler's first statement): the most starts in
 * any window of one second, per type or per key.
 */
describe('rate limits across processes', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_LIMIT_RUNS_TABLE],
    workers: (databaseUrl) =>
      WORKER_IDS.map((workerId) => ({
        databaseUrl,
        workerId,
        concurrency: CONCURRENCY,
        limits: true,
      })),
    bootDeadlineMs: 30_000,
  });

  const waitUntilCompleted = (ids: string[]) =>
    waitFor(
      async () => {
        const [{ n }] = await fleet.dataSource.query(
          `SELECT count(*)::int AS n FROM job_queue.jobs
           WHERE id = ANY($1::bigint[]) AND status = 'completed'`,
          [ids],
        );
        return n === ids.length;
      },
      { description: `${ids.length} jobs to complete`, timeoutMs: DEADLINE_MS },
    );

  // A service in steady state: each process's pool has its connections open. A handler's first
  // statement on a cold pool waits for a new connection (up to 80 ms here), which is the
  // handler's own delay, not the queue's.
  beforeAll(async () => {
    const warm = await fleet.queue.enqueueMany(
      Array.from({ length: 300 }, (_, n) => ({ type: 'limits.plain', data: { n } })),
    );
    await waitUntilCompleted(warm.map((job) => job.id));
  });

  /**
   * The most starts of `jobType` in any window of `windowMs`, per key (`perKey`) or across the
   * type. A window with the most starts can begin at a start, so each start's window is counted.
   */
  async function mostStartsInAWindow(
    jobType: string,
    perKey: boolean,
    windowMs = 1000,
  ): Promise<Map<string, number>> {
    const rows: Array<{ key: string; most: number }> = await fleet.dataSource.query(
      `SELECT COALESCE(CASE WHEN $2 THEN r.concurrency_key END, '') AS key, max(w.n)::int AS most
       FROM limit_runs r CROSS JOIN LATERAL (
         SELECT count(*) AS n FROM limit_runs x
         WHERE x.job_type = r.job_type
           AND (NOT $2 OR x.concurrency_key IS NOT DISTINCT FROM r.concurrency_key)
           AND x.started_at >= r.started_at
           AND x.started_at < r.started_at + $3 * interval '1 millisecond'
       ) AS w
       WHERE r.job_type = $1
       GROUP BY 1`,
      [jobType, perKey, windowMs],
    );
    return new Map(rows.map((row) => [row.key, row.most]));
  }

  /** Jobs of `ids` that spent more than one attempt (waiting must spend none). */
  async function attemptsAbove1(ids: string[]): Promise<number> {
    const [{ n }] = await fleet.dataSource.query(
      `SELECT count(*)::int AS n FROM job_queue.jobs WHERE id = ANY($1::bigint[]) AND attempts <> 1`,
      [ids],
    );
    return n;
  }

  it('per type: 200 jobs at 20 a second across 3 processes, never more in any second', async () => {
    const jobs = await fleet.queue.enqueueMany(
      Array.from({ length: 200 }, (_, n) => ({ type: 'limits.rate', data: { n } })),
    );
    const ids = jobs.map((job) => job.id);
    await waitUntilCompleted(ids);

    expect((await mostStartsInAWindow('limits.rate', false)).get('')).toBe(20);
    expect(await attemptsAbove1(ids)).toBe(0);
  });

  it('per key: 4 keys at 10 a second each, enqueued one key after another', async () => {
    // Each key's jobs in one run, so a key at its limit is at the head of the queue.
    const jobs = await fleet.queue.enqueueMany(
      Array.from({ length: 120 }, (_, n) => ({
        type: 'limits.rate-per-key',
        data: { n },
        concurrencyKey: `tenant-${Math.floor(n / 30)}`,
      })),
    );
    const ids = jobs.map((job) => job.id);
    await waitUntilCompleted(ids);

    const perKey = await mostStartsInAWindow('limits.rate-per-key', true);
    expect([...perKey.keys()].sort()).toEqual(['tenant-0', 'tenant-1', 'tenant-2', 'tenant-3']);
    expect([...perKey.values()]).toEqual([10, 10, 10, 10]);
    // The keys ran side by side: some second saw more than one key's ten.
    expect((await mostStartsInAWindow('limits.rate-per-key', false)).get('')).toBeGreaterThan(10);
    expect(await attemptsAbove1(ids)).toBe(0);
  });

  it('a type at its limit does not hold back an unlimited backlog beside it', async () => {
    const limited = await fleet.queue.enqueueMany(
      Array.from({ length: 100 }, (_, n) => ({ type: 'limits.rate', data: { n } })),
    );
    const plain = await fleet.queue.enqueueMany(
      Array.from({ length: 600 }, (_, n) => ({ type: 'limits.plain', data: { n } })),
    );
    await waitUntilCompleted(plain.map((job) => job.id));
    // The whole unlimited backlog ran while the limited type was still in its first seconds.
    const [{ started }] = await fleet.dataSource.query(
      `SELECT count(*)::int AS started FROM limit_runs WHERE job_id = ANY($1::bigint[])`,
      [limited.map((job) => job.id)],
    );
    expect(started).toBeLessThan(limited.length);
    await waitUntilCompleted(limited.map((job) => job.id));
    expect((await mostStartsInAWindow('limits.rate', false)).get('')).toBe(20);
  });
});

import { CREATE_LIMIT_RUNS_TABLE } from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

/**
 * A copy of every row the claims write to `job_rate_starts` (which later claims delete once out
 * of their window): the starts as the limit counts them, at the claim's clock after its lock.
 */
const LOG_RATE_STARTS = [
  `CREATE TABLE rate_start_log (job_type text, rate_key text, started_at timestamptz, starts int)`,
  `CREATE FUNCTION log_rate_start() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO public.rate_start_log VALUES (NEW.job_type, NEW.rate_key, NEW.started_at, NEW.starts);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER log_rate_start AFTER INSERT ON job_queue.job_rate_starts
   FOR EACH ROW EXECUTE FUNCTION log_rate_start()`,
];
const WORKER_IDS = ['rate-worker-1', 'rate-worker-2', 'rate-worker-3'];
const CONCURRENCY = 10;
const DEADLINE_MS = 60_000;

/**
 * Rate limits across three worker processes: the most starts in any window of one second, per
 * type or per key, as the limit counts them (each claim's starts at its clock once it holds the
 * type's lock), and, for the record, by each handler's first statement (`limit_runs.started_at`).
 */
describe('rate limits across processes', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_LIMIT_RUNS_TABLE, ...LOG_RATE_STARTS],
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
   * A start is the claim's (`claim`: the rows the limit counts, `rate_start_log`, at the claim's
   * clock once it holds the type's lock) or the handler's first statement (`handler`:
   * `limit_runs.started_at`, what a partner would see).
   */
  async function mostStartsInAWindow(
    jobType: string,
    perKey: boolean,
    clock: 'claim' | 'handler',
    windowMs = 1000,
  ): Promise<Map<string, number>> {
    const rows: Array<{ key: string; most: number }> = await fleet.dataSource.query(
      `WITH starts AS (
         SELECT CASE WHEN $2 THEN l.rate_key ELSE '' END AS key, l.started_at AS at, l.starts AS n
         FROM rate_start_log l WHERE $4 AND l.job_type = $1
         UNION ALL
         SELECT COALESCE(CASE WHEN $2 THEN r.concurrency_key END, ''), r.started_at, 1
         FROM limit_runs r WHERE NOT $4 AND r.job_type = $1)
       SELECT s.key, max(w.n)::int AS most
       FROM starts s CROSS JOIN LATERAL (
         SELECT sum(x.n) AS n FROM starts x
         WHERE x.key = s.key AND x.at >= s.at AND x.at < s.at + $3 * interval '1 millisecond'
       ) AS w
       GROUP BY 1`,
      [jobType, perKey, windowMs, clock === 'claim'],
    );
    return new Map(rows.map((row) => [row.key, row.most]));
  }

  /**
   * The busiest second by each clock: by the claims' exactly the limit, the database's promise;
   * by the handlers' first statements, reported (each begins some ms after its claim, within the
   * 50 ms margin on a quiet machine, later on a loaded one).
   */
  async function expectBusiestSecond(jobType: string, perKey: boolean, limit: number) {
    const byClaim = await mostStartsInAWindow(jobType, perKey, 'claim');
    for (const most of byClaim.values()) expect(most).toBe(limit);
    const byHandler = await mostStartsInAWindow(jobType, perKey, 'handler');
    console.log(
      `${jobType}: busiest second by claim ${[...byClaim.values()].join(', ')}, ` +
        `by the handlers' first statements ${[...byHandler.values()].join(', ')} (limit ${limit})`,
    );
    return byClaim;
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

    await expectBusiestSecond('limits.rate', false, 20);
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

    const perKey = await expectBusiestSecond('limits.rate-per-key', true, 10);
    expect([...perKey.keys()].sort()).toEqual(['tenant-0', 'tenant-1', 'tenant-2', 'tenant-3']);
    // The keys ran side by side: some second saw more than one key's ten.
    const acrossKeys = await mostStartsInAWindow('limits.rate-per-key', false, 'claim');
    expect(acrossKeys.get('')).toBeGreaterThan(10);
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
    await expectBusiestSecond('limits.rate', false, 20);
  });
});

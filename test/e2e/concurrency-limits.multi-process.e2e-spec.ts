import { CREATE_LIMIT_RUNS_TABLE, mostOverlappingRuns } from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

const WORKER_IDS = ['limits-worker-1', 'limits-worker-2', 'limits-worker-3'];
/** Each process's own concurrency: well above every limit below, so only the limits hold. */
const CONCURRENCY = 10;
const DEADLINE_MS = 60_000;

/**
 * Concurrency limits across three worker processes, checked from each attempt's start and end
 * as the database's clock recorded them (`limit_runs`): the most attempts that overlap at any
 * moment, per key or per type, never a wall-clock duration.
 */
describe('concurrency limits across processes', () => {
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

  /** Every job of `ids` completed (or, with `orFailed`, finished either way). */
  const waitUntilFinished = (ids: string[]) =>
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

  const mostOverlapping = (jobType: string, perKey: boolean): Promise<Map<string, number>> =>
    mostOverlappingRuns(fleet.dataSource, jobType, perKey);

  it('per key: at most 2 of a key at once, keys in parallel', async () => {
    const jobs = await fleet.queue.enqueueMany(
      Array.from({ length: 300 }, (_, n) => ({
        type: 'limits.per-key',
        data: { n },
        concurrencyKey: `tenant-${n % 10}`,
      })),
    );
    await waitUntilFinished(jobs.map((job) => job.id));

    const perKey = await mostOverlapping('limits.per-key', true);
    expect(perKey.size).toBe(10);
    expect(Math.max(...perKey.values())).toBe(2);
    // Different keys ran at the same time: more than one key's limit overlapped.
    const acrossKeys = await mostOverlapping('limits.per-key', false);
    expect(acrossKeys.get('')).toBeGreaterThan(2);
  });

  it('global: at most 3 of the type at once across the three processes', async () => {
    const jobs = await fleet.queue.enqueueMany(
      Array.from({ length: 90 }, (_, n) => ({ type: 'limits.global', data: { n } })),
    );
    await waitUntilFinished(jobs.map((job) => job.id));

    expect((await mostOverlapping('limits.global', false)).get('')).toBe(3);
    // Which processes ran them is not part of the limit: the node whose outcome frees a slot
    // claims again at once, and may keep all three (as a CI run on PostgreSQL 17 saw).
  });

  it('ordered keys: each key starts its jobs in enqueue order, one at a time, retries included', async () => {
    const KEYS = 5;
    const PER_KEY = 40;
    // Interleaved keys, as a real stream would be; every seventh job fails its first attempt.
    const jobs = await fleet.queue.enqueueMany(
      Array.from({ length: KEYS * PER_KEY }, (_, n) => ({
        type: 'limits.ordered',
        data: { n, failOnce: n % 7 === 3 },
        concurrencyKey: `account-${n % KEYS}`,
      })),
    );
    await waitUntilFinished(jobs.map((job) => job.id));

    const runs: Array<{ key: string; job_id: string; attempt: number }> =
      await fleet.dataSource.query(
        `SELECT concurrency_key AS key, job_id::text AS job_id, attempt FROM limit_runs
         WHERE job_type = 'limits.ordered' ORDER BY started_at, id`,
      );
    const retried = runs.filter((run) => run.attempt === 2).length;
    expect(retried).toBe(jobs.filter((_, n) => n % 7 === 3).length);
    for (let k = 0; k < KEYS; k++) {
      const key = `account-${k}`;
      const enqueued = jobs.filter((job) => job.concurrencyKey === key).map((job) => job.id);
      // Each job's attempts in the order they started: a failed first attempt is followed by
      // its own retry before the key's next job starts.
      const started = runs.filter((run) => run.key === key).map((run) => run.job_id);
      const firstStarts = started.filter((id, i) => started.indexOf(id) === i);
      expect(firstStarts).toEqual(enqueued);
      for (let i = 1; i < started.length; i++) {
        if (started[i] !== started[i - 1]) {
          expect(enqueued.indexOf(started[i])).toBe(enqueued.indexOf(started[i - 1]) + 1);
        }
      }
    }
    expect(Math.max(...(await mostOverlapping('limits.ordered', true)).values())).toBe(1);
  });
});

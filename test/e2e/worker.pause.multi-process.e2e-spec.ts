import { CREATE_JOB_RUNS_TABLE } from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

const WORKER_IDS = ['pause-worker-1', 'pause-worker-2', 'pause-worker-3'];
/** Above the two `slow` jobs running at the pause: every node keeps a free slot for `alpha`. */
const CONCURRENCY = 3;
/** Far longer than any wait below: an idle worker finds work only when a NOTIFY wakes it. */
const POLL_INTERVAL_MS = 60_000;
/** A `slow` job's first attempt: long enough for every slot of the fleet to be seen busy. */
const SLOW_MS = 1_500;
const ALPHA_COUNT = 300;
/** Every slot of the fleet: as many `slow` jobs as the three workers can hold at once. */
const WAITING_SLOW = WORKER_IDS.length * CONCURRENCY;

/**
 * `pause('slow')` across three worker processes: no node claims the type from then on, while the
 * `slow` jobs they run finish and `alpha` keeps flowing on every node; `resume('slow')` wakes the
 * idle nodes (its NOTIFY; their next poll is a minute away) and each of them claims the waiting
 * jobs at once.
 */
describe('pause and resume across processes', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_JOB_RUNS_TABLE],
    workers: (databaseUrl) =>
      WORKER_IDS.map((workerId) => ({
        databaseUrl,
        workerId,
        concurrency: CONCURRENCY,
        // Each node claims only for its free slots, so the waiting jobs spread over all three
        // only if all three woke; a node holding jobs ahead of its slots would take more.
        prefetch: 0,
        pollIntervalMs: POLL_INTERVAL_MS,
        slowMs: SLOW_MS,
      })),
    bootDeadlineMs: 30_000,
  });

  const statusesOf = async (ids: string[]): Promise<Record<string, number>> => {
    const rows: Array<{ status: string; count: number }> = await fleet.dataSource.query(
      `SELECT status, count(*)::int AS count FROM job_queue.jobs
       WHERE id = ANY($1::bigint[]) GROUP BY status`,
      [ids],
    );
    return Object.fromEntries(rows.map((row) => [row.status, row.count]));
  };

  const runsOf = (ids: string[]): Promise<Array<{ job_id: string; worker_id: string }>> =>
    fleet.dataSource.query(
      `SELECT job_id::text AS job_id, worker_id FROM job_runs WHERE job_id = ANY($1::bigint[])`,
      [ids],
    );

  let waiting: string[] = [];

  it('pause: no node claims the type, its running jobs finish, other types run on every node', async () => {
    const { queue } = fleet;
    const running = (
      await queue.enqueueMany([
        { type: 'slow', data: { n: 1 } },
        { type: 'slow', data: { n: 2 } },
      ])
    ).map((job) => job.id);
    // Started by their handlers, not only claimed: a claim the worker has not yet taken in when
    // the pause reaches it is handed back unstarted, as a paused type's held jobs are.
    await waitFor(async () => (await runsOf(running)).length === 2, {
      description: 'both slow jobs to start',
    });

    await queue.pause('slow');
    expect((await queue.stats({ maxAgeMs: 0 })).slow).toMatchObject({ paused: true });
    // The pause leaves running jobs alone: each still runs, or has finished since (a loaded
    // machine can take SLOW_MS to get here); none went back to the queue or failed.
    const atPause = await statusesOf(running);
    expect((atPause.running ?? 0) + (atPause.completed ?? 0)).toBe(2);

    // The paused type's jobs first: at one priority, the older would be claimed first.
    const enqueued = await queue.enqueueMany([
      ...Array.from({ length: WAITING_SLOW }, (_, n) => ({ type: 'slow', data: { n } })),
      ...Array.from({ length: ALPHA_COUNT }, (_, n) => ({ type: 'alpha', data: { n } })),
    ]);
    waiting = enqueued.slice(0, WAITING_SLOW).map((job) => job.id);
    const alpha = enqueued.slice(WAITING_SLOW).map((job) => job.id);

    await waitFor(
      async () =>
        (await statusesOf(alpha)).completed === ALPHA_COUNT &&
        (await statusesOf(running)).completed === 2,
      { timeoutMs: 30_000, description: 'every alpha job and both running slow jobs to complete' },
    );

    // The running jobs finished, on their first attempt.
    const finished = await fleet.dataSource.query(
      `SELECT attempts FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
      [running],
    );
    expect(finished).toEqual([{ attempts: 1 }, { attempts: 1 }]);
    // Every node claimed after the pause (alpha), and none took a paused job.
    const alphaRuns = await runsOf(alpha);
    expect(new Set(alphaRuns.map((run) => run.worker_id))).toEqual(new Set(WORKER_IDS));
    expect(await statusesOf(waiting)).toEqual({ pending: WAITING_SLOW });
    expect(await runsOf(waiting)).toEqual([]);
    const [{ held }] = await fleet.dataSource.query(
      `SELECT count(*)::int AS held FROM job_queue.jobs
       WHERE id = ANY($1::bigint[]) AND (attempts <> 0 OR worker_id IS NOT NULL)`,
      [waiting],
    );
    expect(held).toBe(0);
  });

  it('resume: idle nodes wake at once and each claims the waiting jobs', async () => {
    const { queue } = fleet;
    expect(waiting).toHaveLength(WAITING_SLOW);
    const resumedAt = Date.now();
    await queue.resume('slow');
    expect((await queue.stats()).slow).toMatchObject({ paused: false });

    // Each worker holds at most CONCURRENCY at once and a first attempt lasts SLOW_MS: all of
    // them start together only if all three nodes woke; a node left asleep would wait a minute.
    await waitFor(async () => (await runsOf(waiting)).length === WAITING_SLOW, {
      timeoutMs: 10_000,
      description: 'every waiting slow job to start',
    });
    const startedWithinMs = Date.now() - resumedAt;
    const runs = await runsOf(waiting);
    expect(new Set(runs.map((run) => run.worker_id))).toEqual(new Set(WORKER_IDS));
    console.log(`${WAITING_SLOW} waiting jobs all started ${startedWithinMs} ms after resume()`);

    await waitFor(async () => (await statusesOf(waiting)).completed === WAITING_SLOW, {
      timeoutMs: 10_000,
      description: 'the resumed jobs to complete',
    });
  });
});

import { CREATE_JOB_RUNS_TABLE } from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

const BOOT_DEADLINE_MS = 30_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The run_at (fire time) of every job of `jobType`, oldest first, as epoch ms. */
async function fireTimesOf(
  query: (sql: string, parameters: unknown[]) => Promise<Array<{ run_at: Date }>>,
  jobType: string,
): Promise<number[]> {
  const rows = await query(
    `SELECT run_at FROM job_queue.jobs WHERE job_type = $1 ORDER BY run_at, id`,
    [jobType],
  );
  return rows.map((row) => row.run_at.getTime());
}

describe('cron across processes: one job per fire time', () => {
  const CRON_WORKERS = ['cron-worker-1', 'cron-worker-2', 'cron-worker-3'];
  const RUN_MS = 10_000;
  const fleet = useWorkerFleet({
    setup: [CREATE_JOB_RUNS_TABLE],
    // Every worker has @JobHandler('cron.tick', { cron: '* * * * * *' }): every second.
    workers: (databaseUrl) =>
      CRON_WORKERS.map((workerId) => ({ databaseUrl, workerId, cron: '* * * * * *' })),
    bootDeadlineMs: BOOT_DEADLINE_MS,
  });

  it('every second for 10 s on 3 processes, one killed and restarted: each second exactly once', async () => {
    const { dataSource, workers } = fleet;
    const query = (sql: string, parameters: unknown[]) => dataSource.query(sql, parameters);
    // A few fire times with all three up (events, not a sleep; generous failure bounds).
    await waitFor(async () => (await fireTimesOf(query, 'cron.tick')).length >= 3, {
      timeoutMs: 30_000,
      description: 'three fire times with all three processes up',
    });
    // A crash: no shutdown hook runs. Then the node comes back (a new process, a new id).
    const killed = workers[1];
    killed.kill('SIGKILL');
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [restarted] = await fleet.spawnReady([
      { databaseUrl: fleet.databaseUrl, workerId: 'cron-worker-2-restarted', cron: '* * * * * *' },
    ]);
    const restartedAt = Date.now();
    // At least RUN_MS of fire times in all, a few of them with the restarted node up, whatever
    // its boot took.
    await waitFor(
      async () => {
        const fired = await fireTimesOf(query, 'cron.tick');
        return fired.length >= RUN_MS / 1_000 && fired.at(-1)! > restartedAt + 2_000;
      },
      { timeoutMs: 60_000, description: `${RUN_MS / 1_000} fire times, some after the restart` },
    );
    const stops = await Promise.all(
      [workers[0], workers[2], restarted].map((worker) => worker.stop('SIGTERM')),
    );
    expect(stops).toEqual([0, 1, 2].map(() => ({ code: 0, signal: null })));

    const fired = await fireTimesOf(query, 'cron.tick');
    const [first, last] = [fired[0], fired.at(-1)!];
    // How long after its fire time each job was inserted (the database's clock on both sides).
    const [lag] = await dataSource.query(
      `SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms))::int AS p50,
              round(max(ms))::int AS max
       FROM (SELECT extract(epoch FROM created_at - run_at) * 1000 AS ms
             FROM job_queue.jobs WHERE job_type = 'cron.tick') AS lags`,
    );
    console.log(
      `cron every second on 3 processes: ${fired.length} jobs, ` +
        `${new Date(first).toISOString()} .. ${new Date(last).toISOString()}; ` +
        `enqueued after the fire time: p50 ${lag.p50} ms, max ${lag.max} ms`,
    );
    // Every second from the first fire time to the last, each exactly once: none twice, none
    // skipped, across the kill and the restart.
    const expected = Array.from(
      { length: (last - first) / 1_000 + 1 },
      (_, i) => first + i * 1_000,
    );
    expect(fired).toEqual(expected);
    expect(fired.length).toBeGreaterThanOrEqual(RUN_MS / 1_000);
    expect(last).toBeGreaterThan(restartedAt);
    // The schedule says the same.
    const [schedule] = await fleet.queue.schedules();
    expect(schedule).toMatchObject({ name: 'cron.tick', source: 'handler', cron: '* * * * * *' });
    expect(schedule.lastFireAt!.getTime()).toBe(last);
  });
});

describe('cron across processes: fire times missed while every node was down', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_JOB_RUNS_TABLE],
    workers: () => [], // every node is down
    bootDeadlineMs: BOOT_DEADLINE_MS,
  });

  it('enqueues one job for three missed fire times on return (catchUp once), none with skip', async () => {
    const { queue, dataSource } = fleet;
    // Daily at an hour about 12 h away, so that no fire time is near now: the newest one that
    // came was about 12 h ago, the next is about 12 h ahead.
    const hour = (new Date().getUTCHours() + 12) % 24;
    const cron = `0 ${hour} * * *`;
    await queue.schedule('report-once', cron, 'alpha', { catchUp: 'once' }, { catchUp: 'once' });
    await queue.schedule('report-skip', cron, 'alpha', { catchUp: 'skip' }, { catchUp: 'skip' });
    const newest = new Date();
    newest.setUTCHours(hour, 0, 0, 0);
    if (newest.getTime() > Date.now()) newest.setTime(newest.getTime() - DAY_MS);
    // The stored state: it last fired four days ago, then three fire times came with no node up.
    const missedFrom = new Date(newest.getTime() - 2 * DAY_MS);
    await dataSource.query(`UPDATE job_queue.job_schedules SET next_fire_at = $1`, [missedFrom]);

    // One node comes back.
    const [worker] = await fleet.spawnReady([
      { databaseUrl: fleet.databaseUrl, workerId: 'cron-returning' },
    ]);
    await waitFor(
      async () =>
        (await queue.schedules()).every((schedule) => schedule.nextFireAt!.getTime() > Date.now()),
      { timeoutMs: 15_000, description: 'both schedules to move past the missed fire times' },
    );
    const jobs: Array<{ id: string; data: unknown; run_at: Date }> = await dataSource.query(
      `SELECT id::text, data, run_at FROM job_queue.jobs ORDER BY id`,
    );
    expect(jobs.map(({ data, run_at }) => ({ data, run_at }))).toEqual([
      { data: { catchUp: 'once' }, run_at: newest },
    ]);
    // The one job runs, once.
    await waitFor(async () => (await queue.getJob(jobs[0].id)).status === 'completed', {
      timeoutMs: 15_000,
      description: 'the catch-up job to complete',
    });
    const schedules = await queue.schedules();
    expect(schedules.map((s) => [s.name, s.lastFireAt, s.nextFireAt])).toEqual([
      ['report-once', newest, new Date(newest.getTime() + DAY_MS)],
      ['report-skip', null, new Date(newest.getTime() + DAY_MS)],
    ]);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const [{ runs }] = await dataSource.query(`SELECT count(*)::int AS runs FROM job_runs`);
    expect(runs).toBe(1);
  });
});

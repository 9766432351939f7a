/**
 * Chaos run: 4 worker processes (test/fixtures/worker-process.ts) share one queue while a
 * controller SIGKILLs a random worker every 2 s (and starts a replacement), and the database
 * itself is restarted once. A producer enqueues N `chaos` jobs meanwhile; each handler records
 * (job id, worker, attempt) in `job_runs` and sleeps 0–20 ms. At the end it prints and asserts:
 * no job lost, none unfinished, and no more jobs run twice than were in flight at the kills.
 *
 *   npm run test:chaos              20,000 jobs, a kill every 2 s until drained, 1 DB restart
 *   npm run test:chaos -- --short   2,000 jobs, 2 kills, 1 DB restart (for CI)
 *   npm run test:chaos -- --no-faults   8 workers, 50,000 jobs, no kill, no restart: 0 duplicates
 *   npm run test:chaos -- --transactional   1,000 `chaos.tx` jobs (`transaction: true`), each
 *       inserting one row into `chaos_effects` in its run's transaction; a kill every second, 1 DB
 *       restart: every job completed once and exactly one row per job (`--short`: 300 jobs)
 *   npm run test:chaos -- --transactional --plain-effects   the same with `chaos.plain`, whose
 *       row is inserted outside the completion: reports the duplicate rows a crash leaves
 *
 * Uses its own embedded PostgreSQL (never the machine's). Exits non-zero on a failed check;
 * every child process is killed whatever happens.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { JobQueueUnavailableError, QueueService } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import { ChildWorkers, CREATE_JOB_RUNS_TABLE, WorkerProcess } from '../support/child-workers';
import { OwnPostgres } from '../support/own-postgres';

const short = process.argv.includes('--short');
/** The baseline: with nothing killed, at-least-once must still mean exactly once. */
const noFaults = process.argv.includes('--no-faults');
/** Jobs with a database effect: one row each, in the run's transaction unless `--plain-effects`. */
const transactional = process.argv.includes('--transactional');
const plainEffects = transactional && process.argv.includes('--plain-effects');
const TOTAL_JOBS = transactional
  ? short
    ? 300
    : 1_000
  : short
    ? 2_000
    : noFaults
      ? 50_000
      : 20_000;
/**
 * Enqueue pace: faster than the workers drain (4 × 3 slots, ~13 ms a job), so a backlog builds
 * and every kill hits a worker with full slots; spread over ~4 s (short) or ~20 s.
 */
const JOBS_PER_SECOND = transactional ? 100 : short ? 500 : 1_000;
const CONCURRENCY = 3;
const BATCH = 50;
const WORKERS = noFaults ? 8 : 4;
const MAX_KILLS = short ? 2 : Infinity;
const KILL_EVERY_MS = transactional ? 1_000 : 2_000;
/** Longer than the DB restart, so a restart alone never makes the reaper re-run a job. */
const STALE_AFTER_MS = 5_000;
const DRAIN_DEADLINE_MS = short ? 60_000 : 180_000;
const JOB_TYPE = !transactional ? 'chaos' : plainEffects ? 'chaos.plain' : 'chaos.tx';
const CREATE_CHAOS_EFFECTS_TABLE = `CREATE TABLE chaos_effects (job_id bigint NOT NULL)`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Kill {
  workerId: string;
  held: number;
}

/** Set once the run is over: workers killed then are expected to die. */
let finishing = false;

async function main(): Promise<boolean> {
  const startedAt = Date.now();
  const pg = await OwnPostgres.start('chaos');
  const children = new ChildWorkers();
  const dataSource = new DataSource({ type: 'postgres', url: pg.url, extra: { max: 4 } });
  try {
    await dataSource.initialize();
    await dataSource.query(CREATE_JOB_RUNS_TABLE);
    await dataSource.query(CREATE_CHAOS_EFFECTS_TABLE);
    const queue = new QueueService(
      dataSource,
      resolveJobQueueOptions({ worker: false, databaseTimeoutMs: 5_000 }),
    );

    let nextWorker = 0;
    const spawnWorker = (): WorkerProcess =>
      children.spawn({
        databaseUrl: pg.url,
        workerId: `chaos-${++nextWorker}`,
        concurrency: CONCURRENCY,
        pollIntervalMs: 100,
        staleAfterMs: STALE_AFTER_MS,
        heartbeatIntervalMs: 500,
        reaperIntervalMs: 500,
      });
    /** Booted and claiming: only these are killed (a kill mid-boot would hit no job). */
    const ready = new Set<WorkerProcess>();
    const start = (): Promise<void> => {
      const worker = spawnWorker();
      return worker.waitUntilReady(60_000).then(
        () => void ready.add(worker),
        (error: Error) => {
          if (!finishing) console.error(`${worker.workerId} did not boot: ${error.message}`);
        },
      );
    };
    await Promise.all(Array.from({ length: WORKERS }, start));
    console.log(`${ready.size} workers ready; enqueueing ${TOTAL_JOBS} jobs`);

    // Producer: paced batches; a batch refused during the DB restart is sent again. The unique
    // keys make that retry safe even if the refused batch had in fact committed.
    let enqueued = 0;
    let refusedBatches = 0;
    let producedAt = 0;
    const producer = (async () => {
      for (let n = 0; n < TOTAL_JOBS; n += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, TOTAL_JOBS - n) }, (_, i) => ({
          type: JOB_TYPE,
          data: { n: n + i },
          uniqueKey: `chaos:${n + i}`,
        }));
        for (;;) {
          try {
            await queue.enqueueMany(batch);
            break;
          } catch (error) {
            if (!(error instanceof JobQueueUnavailableError)) throw error;
            refusedBatches++;
            await sleep(200);
          }
        }
        enqueued += batch.length;
        await sleep((BATCH / JOBS_PER_SECOND) * 1_000);
      }
      producedAt = Date.now();
    })();

    const unfinished = async (): Promise<number> => {
      const [{ count }] = await dataSource.query(
        `SELECT count(*)::int AS count FROM job_queue.jobs WHERE status <> 'completed'`,
      );
      return count;
    };

    // Controller: every 2 s (1 s with --transactional) a kill, except the first action: the database restart (first, so no
    // replacement is booting while the database is down).
    const kills: Kill[] = [];
    let dbRestartMs = 0;
    let dbRestarted = false;
    const deadline = Date.now() + DRAIN_DEADLINE_MS;
    for (let tick = 1; Date.now() < deadline; tick++) {
      await sleep(KILL_EVERY_MS);
      const producing = producedAt === 0;
      if (!producing && (await unfinished()) === 0) break;
      if (noFaults) continue;
      if (tick === 1) {
        const down = Date.now();
        await pg.stop();
        await pg.restart();
        dbRestartMs = Date.now() - down;
        dbRestarted = true;
        console.log(`database restarted (down ${dbRestartMs} ms)`);
        continue;
      }
      if (kills.length >= MAX_KILLS) continue;
      // Kill only at full strength: replacements take longer than 2 s to boot, and killing
      // faster than they come back leaves no worker at all (a first full run stalled so).
      // With --transactional a kill every second whatever is booting, as long as two are up.
      const candidates = [...ready].filter((worker) => worker.alive);
      if (candidates.length < (transactional ? 2 : WORKERS)) continue;
      const victim = candidates[Math.floor(Math.random() * candidates.length)];
      victim.kill('SIGKILL');
      await victim.exited;
      ready.delete(victim);
      const [{ held }] = await dataSource.query(
        `SELECT count(*)::int AS held FROM job_queue.jobs
         WHERE worker_id = $1 AND status IN ('claimed', 'running')`,
        [victim.workerId],
      );
      kills.push({ workerId: victim.workerId, held });
      console.log(`killed ${victim.workerId} holding ${held} job(s); starting a replacement`);
      void start();
    }
    await producer;
    while (Date.now() < deadline && (await unfinished()) > 0) await sleep(100);
    const drainedAt = Date.now();

    const [totals] = await dataSource.query(
      `SELECT count(*)::int AS jobs,
              count(DISTINCT unique_key)::int AS keys,
              count(*) FILTER (WHERE status <> 'completed')::int AS unfinished
       FROM job_queue.jobs WHERE job_type = $1`,
      [JOB_TYPE],
    );
    const [runs] = await dataSource.query(
      `SELECT coalesce(sum(times), 0)::int AS runs,
              count(*) FILTER (WHERE times > 1)::int AS "runMoreThanOnce"
       FROM (SELECT job_id, count(*) AS times FROM job_runs GROUP BY job_id) per_job`,
    );
    // Rows each job's effect left: exactly one when the effect commits with the completion.
    const [effects] = await dataSource.query(
      `SELECT coalesce(sum(times), 0)::int AS rows,
              count(*) FILTER (WHERE times = 1)::int AS "jobsWithOneRow",
              count(*) FILTER (WHERE times > 1)::int AS "jobsWithMoreRows",
              coalesce(sum(times - 1), 0)::int AS "duplicateRows"
       FROM (SELECT job_id, count(*)::int AS times FROM chaos_effects GROUP BY job_id) per_job`,
    );
    const lost = TOTAL_JOBS - totals.keys;
    const inFlightAtKills = kills.reduce((sum, kill) => sum + kill.held, 0);
    const report = {
      mode: short ? 'short' : noFaults ? 'no-faults' : 'full',
      effects: transactional ? (plainEffects ? 'plain' : 'transaction') : 'none',
      jobType: JOB_TYPE,
      jobs: TOTAL_JOBS,
      enqueued,
      refusedBatchesRetried: refusedBatches,
      jobRows: totals.jobs,
      lost,
      unfinished: totals.unfinished,
      runs: runs.runs,
      runMoreThanOnce: runs.runMoreThanOnce,
      ...(transactional
        ? {
            effectRows: effects.rows,
            jobsWithOneEffectRow: effects.jobsWithOneRow,
            jobsWithDuplicateEffectRows: effects.jobsWithMoreRows,
            duplicateEffectRows: effects.duplicateRows,
          }
        : {}),
      kills: kills.length,
      inFlightAtKills,
      dbRestarts: dbRestarted ? 1 : 0,
      dbDownMs: dbRestartMs,
      drainMsAfterLastEnqueue: producedAt ? drainedAt - producedAt : null,
      totalMs: drainedAt - startedAt,
    };
    console.log(JSON.stringify(report, null, 2));

    const failures: string[] = [];
    if (lost !== 0) failures.push(`${lost} job(s) lost`);
    if (totals.unfinished !== 0) failures.push(`${totals.unfinished} job(s) unfinished`);
    if (totals.jobs !== TOTAL_JOBS) failures.push(`${totals.jobs} job rows for ${TOTAL_JOBS} keys`);
    if (
      transactional &&
      !plainEffects &&
      (effects.jobsWithOneRow !== TOTAL_JOBS || effects.rows !== TOTAL_JOBS)
    ) {
      failures.push(
        `${TOTAL_JOBS - effects.jobsWithOneRow} job(s) without exactly one effect row ` +
          `(${effects.rows} rows for ${TOTAL_JOBS} jobs)`,
      );
    }
    // A transactional run in flight at the database restart could not commit and ran again:
    // its re-runs are not bounded by the kills alone (its effect still is, above).
    if (!transactional && runs.runMoreThanOnce > inFlightAtKills) {
      failures.push(
        `${runs.runMoreThanOnce} job(s) ran more than once, but only ${inFlightAtKills} ` +
          `were in flight at the kills`,
      );
    }
    if (!noFaults && kills.length === 0) failures.push('no worker was killed');
    if (!noFaults && !dbRestarted) failures.push('the database was not restarted');
    for (const failure of failures) console.error(`FAIL: ${failure}`);
    if (failures.length === 0) console.log('chaos: PASS');
    return failures.length === 0;
  } finally {
    finishing = true;
    await children.killAll();
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    await pg.destroy();
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

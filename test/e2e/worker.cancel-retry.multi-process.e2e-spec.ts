import { randomInt } from 'node:crypto';
import { JobStateConflictError } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { simulateWork } from '../support/gate';
import { CREATE_RUN_LOG_TABLE } from '../support/child-workers';
import { useWorkerFleet } from '../support/worker-fleet';

const JOB_COUNT = 2_000;
const CANCELS = 200;
const WORKER_IDS = ['fence-worker-1', 'fence-worker-2', 'fence-worker-3'];
const BOOT_DEADLINE_MS = 30_000;
const RUN_DEADLINE_MS = 45_000;

/**
 * What the queue wrote, as it wrote it: every completion, and every write of progress or stage,
 * with the job's status before it and the fencing token the row held at that moment.
 */
const RECORD_JOB_WRITES = [
  `CREATE TABLE completions (job_id bigint NOT NULL, run_token integer NOT NULL, result jsonb)`,
  `CREATE TABLE progress_writes (
     job_id bigint NOT NULL, run_token integer NOT NULL, stage text, status_before text NOT NULL)`,
  `CREATE FUNCTION record_job_writes() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.status = 'completed' AND OLD.status <> 'completed' THEN
       INSERT INTO completions VALUES (NEW.id, NEW.run_token, NEW.result);
     END IF;
     -- A cancel adds its rows to the job's log (events_count) and is not a run's write.
     IF NEW.status <> 'cancelled' AND (NEW.events_count <> OLD.events_count
        OR NEW.progress <> OLD.progress OR NEW.current_stage IS DISTINCT FROM OLD.current_stage) THEN
       INSERT INTO progress_writes VALUES (NEW.id, NEW.run_token, NEW.current_stage, OLD.status);
     END IF;
     RETURN NULL;
   END
   $$`,
  `CREATE TRIGGER record_job_writes AFTER UPDATE ON job_queue.jobs
     FOR EACH ROW EXECUTE FUNCTION record_job_writes()`,
];

/**
 * Three worker processes run 2,000 jobs while 200 times a running job is cancelled at a random
 * moment and retried at once: the cancelled run goes on for a moment (half the handlers ignore
 * their signal) and tries to write progress and a result. Every job must end `completed` exactly
 * once, with the result of its last run, and no write of a superseded run may land.
 */
describe('fencing across processes: cancel and retry while running', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_RUN_LOG_TABLE, ...RECORD_JOB_WRITES],
    workers: (databaseUrl) =>
      WORKER_IDS.map((workerId) => ({
        databaseUrl,
        workerId,
        concurrency: 10,
        pollIntervalMs: 50,
      })),
    bootDeadlineMs: BOOT_DEADLINE_MS,
  });

  /**
   * Cancels `id` (running when last seen) after a random moment, once its run's handler has
   * started (a job is `running` from its claim, and a cancel before its handler starts leaves
   * that run nothing to log), then retries it until accepted. False: no cancel of a started run.
   */
  async function cancelAndRetry(id: string): Promise<boolean> {
    const { queue, dataSource } = fleet;
    await simulateWork(randomInt(0, 40));
    const [{ started }] = await dataSource.query(
      `SELECT EXISTS (
         SELECT 1 FROM job_queue.jobs j JOIN run_log r
           ON r.job_id = j.id AND r.run_token = j.run_token AND r.event = 'started'
         WHERE j.id = $1 AND j.status = 'running') AS started`,
      [id],
    );
    if (!started) return false;
    try {
      await queue.cancel(id);
    } catch (error) {
      if (error instanceof JobStateConflictError) return false; // it finished first
      throw error;
    }
    await waitFor(
      async () => {
        try {
          await queue.retry(id);
          return true;
        } catch (error) {
          if (error instanceof JobStateConflictError) return false;
          throw error;
        }
      },
      { description: `job ${id} to be retried` },
    );
    return true;
  }

  it('completes every job once, with its last run’s result; no superseded write lands', async () => {
    const { queue, dataSource, workers } = fleet;
    const startedAt = Date.now();
    const jobs = await queue.enqueueMany(
      Array.from({ length: JOB_COUNT }, (_, n) => ({ type: 'fenced', data: { n } })),
    );
    const ids = jobs.map((job) => job.id);
    // Jobs to watch, in random order; a retried one stays watched and may be cancelled again.
    const unwatched = [...ids].sort(() => Math.random() - 0.5);
    const watching = new Set<string>();
    const busy = new Set<string>();
    const inFlight: Array<Promise<void>> = [];
    let cancels = 0;
    let attempts = 0;
    while (cancels < CANCELS) {
      if (Date.now() - startedAt > RUN_DEADLINE_MS) {
        throw new Error(`Only ${cancels} of ${CANCELS} cancels of running jobs landed in time`);
      }
      while (watching.size < 60 && unwatched.length > 0) watching.add(unwatched.pop()!);
      if (watching.size === 0) throw new Error(`Every job finished after ${cancels} cancels`);
      const rows: Array<{ id: string; status: string }> = await dataSource.query(
        `SELECT id::text, status FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
        [[...watching]],
      );
      for (const { id, status } of rows) {
        if (status === 'completed') watching.delete(id);
        if (status !== 'running' || busy.has(id) || attempts - cancels > 20) continue;
        busy.add(id);
        attempts++;
        inFlight.push(
          cancelAndRetry(id)
            .then((cancelled) => {
              if (cancelled) cancels++;
              else attempts--;
            })
            .finally(() => busy.delete(id)),
        );
      }
      await simulateWork(15);
    }
    await Promise.all(inFlight);

    await waitFor(
      async () => {
        const [{ done }] = await dataSource.query(
          `SELECT count(*)::int AS done FROM job_queue.jobs WHERE status = 'completed'`,
        );
        return done === JOB_COUNT;
      },
      { timeoutMs: RUN_DEADLINE_MS, intervalMs: 100, description: `${JOB_COUNT} completed jobs` },
    );
    console.log(
      `${JOB_COUNT} jobs, ${cancels} cancels of running jobs (each retried), done by ` +
        `${WORKER_IDS.length} worker processes in ${Date.now() - startedAt} ms`,
    );

    // Exactly one completion per job, by its last run (the token it ends with), whose result it is.
    const badCompletions = await dataSource.query(
      `SELECT j.id, j.run_token, count(c.job_id)::int AS completions,
              min(c.run_token) AS completed_by, j.result
       FROM job_queue.jobs j LEFT JOIN completions c ON c.job_id = j.id
       GROUP BY j.id
       HAVING count(c.job_id) <> 1 OR min(c.run_token) <> j.run_token
           OR (j.result->>'token')::int <> j.run_token
       LIMIT 5`,
    );
    expect(badCompletions).toEqual([]);
    // The stored result is the one the last run made: its nonce, from the run log.
    const notLastRun = await dataSource.query(
      `SELECT j.id, j.result FROM job_queue.jobs j
       WHERE NOT EXISTS (
         SELECT 1 FROM run_log r
         WHERE r.job_id = j.id AND r.run_token = j.run_token AND r.event = 'finished'
           AND r.nonce = j.result->>'nonce' AND r.worker_id = j.result->>'by')
       LIMIT 5`,
    );
    expect(notLastRun).toEqual([]);
    // Every progress write landed while the job was held, by the run holding it.
    const strayWrites = await dataSource.query(
      `SELECT * FROM progress_writes
       WHERE status_before NOT IN ('claimed', 'running') OR stage IS DISTINCT FROM 'run ' || run_token
       LIMIT 5`,
    );
    expect(strayWrites).toEqual([]);
    const [stages] = await dataSource.query(
      `SELECT count(*)::int AS wrong FROM job_queue.jobs
       WHERE current_stage IS DISTINCT FROM 'run ' || run_token OR progress <> 90`,
    );
    expect(stages).toEqual({ wrong: 0 });

    const exits = await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
    expect(exits).toEqual(WORKER_IDS.map(() => ({ code: 0, signal: null })));
    const [{ held }] = await dataSource.query(
      `SELECT count(*)::int AS held FROM job_queue.jobs WHERE status IN ('pending', 'claimed', 'running')`,
    );
    expect(held).toBe(0);

    // The superseded runs did run, and tried: some went on to the end after their job was taken.
    // Counted once the workers have exited: a superseded run's own log write may still be on its
    // way when the job's last run completes it (the workers' pools are busy), not after shutdown.
    const [runs] = await dataSource.query(
      `SELECT count(*) FILTER (WHERE event = 'started')::int AS started,
              count(*) FILTER (WHERE r.run_token < j.run_token AND event = 'finished')::int
                AS superseded_finished,
              count(*) FILTER (WHERE r.run_token < j.run_token AND event = 'finished' AND aborted)::int
                AS superseded_finished_aborted
       FROM run_log r JOIN job_queue.jobs j ON j.id = r.job_id`,
    );
    console.log(
      `runs started ${runs.started}; superseded runs that still finished: ` +
        `${runs.superseded_finished} (${runs.superseded_finished_aborted} of them with their signal aborted)`,
    );
    expect(runs.started).toBeGreaterThanOrEqual(JOB_COUNT + cancels);
  });
});

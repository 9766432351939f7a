import { DataSource } from 'typeorm';
import { QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ChildWorkers, CREATE_JOB_RUNS_TABLE, WorkerProcessConfig } from '../support/child-workers';

const STALE_AFTER_MS = 3_000;
const HEARTBEAT_INTERVAL_MS = 500;
const REAPER_INTERVAL_MS = 500;
const POLL_INTERVAL_MS = 200;
/**
 * After the reaper: a poll of the survivor, the quick re-run, the completion write, and slack
 * for a loaded machine. Generous: it is the failure bound, not a measurement (without the
 * reaper, the jobs would never settle at all).
 */
const RECOVERY_MARGIN_MS = 30_000;
const RECOVERY_DEADLINE_MS = STALE_AFTER_MS + REAPER_INTERVAL_MS + RECOVERY_MARGIN_MS;
const BOOT_DEADLINE_MS = 30_000;
const SLOW_JOBS = 10;

interface JobState {
  id: string;
  status: string;
  attempts: number;
  worker_id: string | null;
  last_error: string | null;
}

/**
 * A worker process killed with SIGKILL mid-run: another worker process's reaper notices the
 * lease expire and recovers its jobs, re-running those with attempts left and failing the one
 * that was on its last attempt, within staleAfterMs + the reaper interval + a margin.
 */
describe('worker crash recovery across processes', () => {
  const children = new ChildWorkers();
  let db: TestDatabase;
  let producer: QueueTestingModule;
  let queue: QueueService;
  let dataSource: DataSource;

  const workerConfig = (workerId: string): WorkerProcessConfig => ({
    databaseUrl: db.url,
    workerId,
    concurrency: SLOW_JOBS,
    pollIntervalMs: POLL_INTERVAL_MS,
    staleAfterMs: STALE_AFTER_MS,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    reaperIntervalMs: REAPER_INTERVAL_MS,
    // The first attempt of a slow job never ends by itself; re-runs (attempt 2+) return at once.
    slowMs: 'until-aborted',
  });

  const jobStates = (ids: string[]): Promise<JobState[]> =>
    dataSource.query(
      `SELECT id::text, status, attempts, worker_id, last_error FROM job_queue.jobs
       WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    producer = await createQueueTestingModule({ url: db.url });
    ({ queue, dataSource } = producer);
    await dataSource.query(CREATE_JOB_RUNS_TABLE);
  });

  afterAll(async () => {
    await children.killAll();
    await producer?.close();
    await db?.drop();
  });

  it('recovers the jobs of a SIGKILLed worker: re-runs 9, fails the one on its last attempt', async () => {
    const jobs = await queue.enqueueMany(
      Array.from({ length: SLOW_JOBS }, (_, n) => ({
        type: 'slow',
        data: { n },
        ...(n === 0 ? { maxAttempts: 1 } : {}),
      })),
    );
    const ids = jobs.map((job) => job.id);
    const lastAttemptId = ids[0];
    const retriedIds = ids.slice(1);

    // The doomed worker takes all 10 (it is the only worker yet) and hangs in every handler.
    const doomed = children.spawn(workerConfig('crash-doomed'));
    await doomed.waitUntilReady(BOOT_DEADLINE_MS);
    await waitFor(
      async () => {
        const [{ started }] = await dataSource.query(
          `SELECT count(*)::int AS started FROM job_runs WHERE worker_id = 'crash-doomed' AND attempt = 1`,
        );
        const states = await jobStates(ids);
        return (
          started === SLOW_JOBS &&
          states.every((job) => job.status === 'running' && job.worker_id === 'crash-doomed')
        );
      },
      { timeoutMs: 10_000, description: '10 slow jobs running on the doomed worker' },
    );

    // The survivor boots while the doomed worker still holds every job: nothing for it to claim.
    const survivor = children.spawn(workerConfig('crash-survivor'));
    await survivor.waitUntilReady(BOOT_DEADLINE_MS);
    expect((await jobStates(ids)).every((job) => job.worker_id === 'crash-doomed')).toBe(true);

    const killedAt = Date.now();
    doomed.kill('SIGKILL');
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const final = await waitFor(
      async () => {
        const states = await jobStates(ids);
        const settled = states.every((job) =>
          job.id === lastAttemptId ? job.status === 'failed' : job.status === 'completed',
        );
        return settled ? states : undefined;
      },
      {
        timeoutMs: RECOVERY_DEADLINE_MS - (Date.now() - killedAt),
        intervalMs: 50,
        description: `recovery within ${RECOVERY_DEADLINE_MS} ms of the SIGKILL`,
      },
    );

    const lastAttempt = final.find((job) => job.id === lastAttemptId)!;
    expect(lastAttempt).toMatchObject({ status: 'failed', attempts: 1 });
    expect(lastAttempt.last_error).toMatch(/crash-doomed stopped heartbeating during attempt 1/);
    expect(lastAttempt.last_error).toMatch(/the last one/);

    for (const job of final.filter((row) => row.id !== lastAttemptId)) {
      expect(job).toMatchObject({ status: 'completed', attempts: 2, worker_id: 'crash-survivor' });
    }

    // One run per attempt: attempt 1 on the doomed worker for all 10, attempt 2 on the survivor
    // for the 9 with attempts left, none for the one that had none.
    const runs: Array<{ job_id: string; worker_id: string; attempt: number }> =
      await dataSource.query(
        `SELECT job_id::text, worker_id, attempt FROM job_runs ORDER BY job_id::bigint, attempt`,
      );
    const expectedRuns = [
      { job_id: lastAttemptId, worker_id: 'crash-doomed', attempt: 1 },
      ...retriedIds.flatMap((id) => [
        { job_id: id, worker_id: 'crash-doomed', attempt: 1 },
        { job_id: id, worker_id: 'crash-survivor', attempt: 2 },
      ]),
    ].sort((a, b) => Number(a.job_id) - Number(b.job_id) || a.attempt - b.attempt);
    expect(runs).toEqual(expectedRuns);

    const [{ held }] = await dataSource.query(
      `SELECT count(*)::int AS held FROM job_queue.jobs WHERE status IN ('claimed', 'running')`,
    );
    expect(held).toBe(0);

    // The survivor still shuts down cleanly.
    expect(await survivor.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});

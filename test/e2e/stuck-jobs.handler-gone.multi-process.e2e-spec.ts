import { CapturingLogger } from '../support/capturing-logger';
import {
  ChildWorkers,
  CREATE_LIMIT_RUNS_TABLE,
  mostOverlappingRuns,
  WorkerProcess,
} from '../support/child-workers';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

/** The fixture's type with `concurrencyPerKey: 1` (test/fixtures/worker-process.ts). */
const HELD_JOB = 'limits.held';
const KEY = 'tenant-k';
const JOBS = 5;

/** The remaining node's: it rescues the crashed holder's job after this. */
const STALE_AFTER_MS = 5_000;
/**
 * The holders' lease renewal, far below `STALE_AFTER_MS`: a live holder is not rescued, even on
 * a loaded machine.
 */
const HEARTBEAT_INTERVAL_MS = 250;
/** The remaining node's: a key's jobs waiting this long with nothing to release them go back. */
const STUCK_AFTER_MS = 1_000;
const REAPER_INTERVAL_MS = 100;
/** The failure bound of each wait: generous for a loaded 2-core machine, not a measurement. */
const DEADLINE_MS = 30_000;
const BOOT_DEADLINE_MS = 30_000;

interface JobRow {
  id: string;
  status: string;
  attempts: number;
  worker_id: string | null;
  last_error: string | null;
}

interface LimitsRow {
  concurrency_per_key: number | null;
  /** As text: microseconds, which a Date would round away. */
  limits_updated_at: string;
}

/**
 * Issue 52: a type whose handler is gone from every node. One node runs a job of key K (its
 * handler holds it) while K's other jobs wait for the slot; then every node with the handler goes
 * away, gracefully (SIGTERM: the app closes and hands its job back) or by a crash (SIGKILL: the
 * job is rescued by the reaper of a node that has no handler for the type). The remaining node,
 * without the handler, keeps running maintenance: within a deadline no job of the type is
 * `waiting` (all `pending`, none lost, no attempt spent by the waiting ones), and the type's
 * stored limits stay. A node with the handler booted after runs every job, one of K at a time.
 */
describe('stuck waiting jobs: the handler gone from every node', () => {
  const children = new ChildWorkers();
  const file = useWorkerTestFile({ beforeClose: () => children.killAll() });
  const logger = new CapturingLogger();
  let remaining: WorkerApp;

  const sql = <T>(text: string, params: unknown[] = []): Promise<T[]> =>
    remaining.dataSource.query(text, params);

  beforeAll(async () => {
    // A worker with no handler at all: maintenance only (reaper, stager), claims nothing.
    remaining = await file.start({
      queueOptions: {
        staleAfterMs: STALE_AFTER_MS,
        reaperIntervalMs: REAPER_INTERVAL_MS,
        stuckAfterMs: STUCK_AFTER_MS,
        stagerIntervalMs: REAPER_INTERVAL_MS,
        worker: { pollIntervalMs: 50 },
      },
      logger,
    });
    await sql(CREATE_LIMIT_RUNS_TABLE);
  });

  beforeEach(async () => {
    logger.lines.length = 0;
    await sql(`DELETE FROM job_queue.jobs`);
    await sql(`DELETE FROM limit_runs`);
    // Each test's holder stores the type's limits afresh.
    await sql(`DELETE FROM job_queue.job_types WHERE job_type = $1`, [HELD_JOB]);
  });

  const jobRows = (): Promise<JobRow[]> =>
    sql<JobRow>(
      `SELECT id::text, status, attempts, worker_id, last_error FROM job_queue.jobs
       WHERE job_type = $1 ORDER BY id`,
      [HELD_JOB],
    );

  const storedLimits = async (): Promise<LimitsRow | undefined> =>
    (
      await sql<LimitsRow>(
        `SELECT concurrency_per_key, limits_updated_at::text AS limits_updated_at
         FROM job_queue.job_types WHERE job_type = $1`,
        [HELD_JOB],
      )
    )[0];

  const spawnWorker = async (workerId: string, holds: boolean): Promise<WorkerProcess> => {
    const [worker] = await children.spawnReady(
      [
        {
          databaseUrl: file.url,
          workerId,
          limits: true,
          concurrency: 10,
          pollIntervalMs: 50,
          staleAfterMs: STALE_AFTER_MS,
          heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
          shutdownTimeoutMs: 300,
          // The holder's attempts never end by themselves; the later node's run at once.
          ...(holds ? { slowMs: 'until-aborted' as const } : {}),
        },
      ],
      BOOT_DEADLINE_MS,
    );
    return worker;
  };

  /**
   * Boots the holder, enqueues the jobs of K and waits until it runs one of them and the others
   * wait for its slot. Returns the holder, the running job's id and the stored limits.
   */
  async function holdKey(holderId: string) {
    const holder = await spawnWorker(holderId, true);
    const limits = await storedLimits();
    expect(limits?.concurrency_per_key).toBe(1);
    await remaining.queue.enqueueMany(
      Array.from({ length: JOBS }, (_, n) => ({
        type: HELD_JOB,
        data: { n },
        concurrencyKey: KEY,
      })),
    );
    const held = await waitFor(
      async () => {
        const rows = await jobRows();
        const running = rows.filter((r) => r.status === 'running' && r.worker_id === holderId);
        const waiting = rows.filter((r) => r.status === 'waiting');
        return running.length === 1 && waiting.length === JOBS - 1 ? running[0] : undefined;
      },
      { timeoutMs: DEADLINE_MS, description: `1 job of ${KEY} running, ${JOBS - 1} waiting` },
    );
    return { holder, heldId: held.id, limits: limits! };
  }

  /** Waits until every job of the type is `pending`, none `waiting`; returns them. */
  const waitUntilAllPending = (): Promise<JobRow[]> =>
    waitFor(
      async () => {
        const rows = await jobRows();
        return rows.length === JOBS && rows.every((r) => r.status === 'pending') ? rows : undefined;
      },
      { timeoutMs: DEADLINE_MS, description: `all ${JOBS} jobs of ${HELD_JOB} pending` },
    );

  /**
   * Boots a node with the handler and waits until it completed every job; checks that it ran
   * each once, never two of K at once (the database's clock), and left the limits as stored.
   */
  async function runAllOnNewNode(
    workerId: string,
    limits: LimitsRow,
    heldId: string,
  ): Promise<JobRow[]> {
    const worker = await spawnWorker(workerId, false);
    const done = await waitFor(
      async () => {
        const rows = await jobRows();
        return rows.length === JOBS && rows.every((r) => r.status === 'completed')
          ? rows
          : undefined;
      },
      { timeoutMs: DEADLINE_MS, description: `all ${JOBS} jobs completed by ${workerId}` },
    );
    expect(done.every((r) => r.worker_id === workerId)).toBe(true);

    const runs = await sql<{ job_id: string; finished: boolean }>(
      `SELECT job_id::text, finished_at IS NOT NULL AS finished FROM limit_runs
       WHERE worker_id = $1 ORDER BY job_id`,
      [workerId],
    );
    expect(runs.map((r) => r.job_id)).toEqual(done.map((r) => r.id));
    expect(runs.every((r) => r.finished)).toBe(true);
    // The most runs of K open at once, at each one's start. The holder's one run (never
    // finished: aborted or killed) overlaps none, and ended before this node booted.
    expect((await mostOverlappingRuns(remaining.dataSource, HELD_JOB, true)).get(KEY)).toBe(1);
    // Before it, only the held job ever started: the others waited, and nothing else ran them.
    const earlier = await sql<{ job_id: string }>(
      `SELECT job_id::text FROM limit_runs WHERE worker_id <> $1`,
      [workerId],
    );
    expect(earlier).toEqual([{ job_id: heldId }]);
    // Same limits: the boot wrote nothing.
    expect(await storedLimits()).toEqual(limits);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    return done;
  }

  it('gracefully: the holder hands its job back, the reaper of a node without the handler moves the waiting ones back', async () => {
    const { holder, heldId, limits } = await holdKey('handler-gone-graceful');

    expect(await holder.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(holder.outputTail()).toMatch(/Handed 1 unfinished job\(s\) back to the queue/);

    const pending = await waitUntilAllPending();
    // None lost, none ran again, and no attempt spent: the held one's was given back.
    expect(pending.map((r) => [r.status, r.attempts, r.worker_id])).toEqual(
      Array.from({ length: JOBS }, () => ['pending', 0, null]),
    );
    expect(pending.map((r) => r.id)).toContain(heldId);
    expect(
      logger.matching(new RegExp(`^Job type ${HELD_JOB}: \\d+ job\\(s\\) waited over`)),
    ).not.toHaveLength(0);
    // The type's limits stay stored, untouched, with no node that has its handler.
    expect(await storedLimits()).toEqual(limits);

    const done = await runAllOnNewNode('handler-back-graceful', limits, heldId);
    expect(done.map((r) => r.attempts)).toEqual(Array.from({ length: JOBS }, () => 1));
  }, 120_000);

  it('crashed: the reaper of a node without the handler rescues the held job and moves the waiting ones back', async () => {
    const holderId = 'handler-gone-crashed';
    const { holder, heldId, limits } = await holdKey(holderId);

    holder.kill('SIGKILL');
    expect(await holder.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const pending = await waitUntilAllPending();
    const rescued = pending.find((r) => r.id === heldId)!;
    // The crashed attempt is spent, and says why; the waiting jobs spent none.
    expect(rescued).toMatchObject({ status: 'pending', attempts: 1, worker_id: null });
    expect(rescued.last_error).toMatch(
      new RegExp(`Worker ${holderId} stopped heartbeating during attempt 1`),
    );
    expect(
      pending.filter((r) => r.id !== heldId).map((r) => [r.attempts, r.worker_id, r.last_error]),
    ).toEqual(Array.from({ length: JOBS - 1 }, () => [0, null, null]));
    expect(
      logger.matching(new RegExp(`Recovered stale job ${heldId} \\(${HELD_JOB}\\)`)),
    ).toHaveLength(1);
    expect(
      logger.matching(new RegExp(`^Job type ${HELD_JOB}: \\d+ job\\(s\\) waited over`)),
    ).not.toHaveLength(0);
    expect(await storedLimits()).toEqual(limits);

    const done = await runAllOnNewNode('handler-back-crashed', limits, heldId);
    expect(done.map((r) => (r.id === heldId ? 2 : 1))).toEqual(done.map((r) => r.attempts));
  }, 120_000);
});

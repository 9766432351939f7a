import { Client } from 'pg';
import { DependencyFailurePolicy, FlowNode, Job, JobStatus } from 'nest-pg-job-queue';
import { CREATE_FLOW_RUNS_TABLE } from '../support/child-workers';
import { FlowLeafData, FlowSum } from '../fixtures/flow.handlers';
import { waitFor } from '../support/wait-for';
import { useWorkerFleet } from '../support/worker-fleet';

const WORKER_IDS = ['flow-worker-1', 'flow-worker-2', 'flow-worker-3'];
/** Short, so that the survivors' reapers take back a SIGKILLed worker's jobs within seconds. */
const STALE_AFTER_MS = 3_000;
const HEARTBEAT_INTERVAL_MS = 500;
const REAPER_INTERVAL_MS = 500;
/** A failure bound for a flow to finish, not a measurement. */
const FLOW_DEADLINE_MS = 30_000;
const FINISHED: readonly string[] = [JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled];

interface FlowJobRow {
  id: string;
  step_name: string;
  job_type: string;
  status: string;
  attempts: number;
  worker_id: string | null;
  last_error: string | null;
  result: FlowSum | null;
}

interface FlowRunRow {
  job_id: string;
  step_name: string;
  attempt: number;
  worker_id: string;
  seen_steps: string[] | null;
  failed: unknown[] | null;
}

/** A tree of merges over leaves: `leafValues[m]` are the values of merge `m`'s leaves. */
function mergeTree(
  leafValues: number[][],
  leaf: (m: number, l: number) => Partial<FlowNode> = () => ({}),
  onDependencyFailure?: DependencyFailurePolicy,
): FlowNode {
  return {
    type: 'flow.merge',
    data: {},
    children: leafValues.map((values, m) => ({
      type: 'flow.merge',
      data: {},
      onDependencyFailure,
      children: values.map((value, l) => ({
        type: 'flow.leaf',
        data: { value } satisfies FlowLeafData,
        ...leaf(m, l),
      })),
    })),
  };
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

/**
 * Workflows across three worker processes (`flow.leaf`, `flow.merge` of
 * test/fixtures/flow.handlers.ts, which record each attempt's start in `flow_runs` on the
 * database's clock): a job starts only once its dependencies have finished, whichever process
 * finished them; a failure moves up a tree by each node's policy; a worker killed mid-flow loses
 * nothing; and a dependant enqueued while its dependency finishes is never left blocked.
 */
describe('workflows across processes', () => {
  const fleet = useWorkerFleet({
    setup: [CREATE_FLOW_RUNS_TABLE],
    workers: (databaseUrl) =>
      WORKER_IDS.map((workerId) => ({
        databaseUrl,
        workerId,
        flows: true,
        staleAfterMs: STALE_AFTER_MS,
        heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
        reaperIntervalMs: REAPER_INTERVAL_MS,
      })),
    bootDeadlineMs: 30_000,
  });

  const flowJobs = async (flowId: string): Promise<Map<string, FlowJobRow>> => {
    const rows: FlowJobRow[] = await fleet.dataSource.query(
      `SELECT id::text, step_name, job_type, status, attempts, worker_id, last_error, result
       FROM job_queue.jobs WHERE flow_id = $1`,
      [flowId],
    );
    return new Map(rows.map((row) => [row.step_name, row]));
  };

  const flowRuns = (flowId: string): Promise<FlowRunRow[]> =>
    fleet.dataSource.query(
      `SELECT r.job_id::text, r.step_name, r.attempt, r.worker_id, r.seen_steps, r.failed
       FROM flow_runs r JOIN job_queue.jobs j ON j.id = r.job_id
       WHERE j.flow_id = $1 ORDER BY r.id`,
      [flowId],
    );

  /** Waits until every job of the flows has finished, and returns each flow's jobs by step. */
  const waitUntilFinished = (flowIds: string[], timeoutMs = FLOW_DEADLINE_MS) =>
    waitFor(
      async () => {
        const flows = await Promise.all(flowIds.map(flowJobs));
        const done = flows.every((jobs) =>
          [...jobs.values()].every((j) => FINISHED.includes(j.status)),
        );
        return done ? flows : undefined;
      },
      { timeoutMs, intervalMs: 100, description: `flows ${flowIds.join(', ')} to finish` },
    );

  /**
   * Runs of the flow's jobs that started before one of their dependencies had finished: the
   * handler's first statement (clock_timestamp(), after the claim committed) against the
   * dependency's completed_at (its completion's now(), before that committed). Not the row's
   * started_at: that is the claim's now(), taken when the claim's transaction began, before the
   * snapshot in which the claim found the job due (the claim function reads in a statement of
   * its own), so it may precede the dependency's completed_at.
   */
  const earlyStarts = (flowId: string): Promise<unknown[]> =>
    fleet.dataSource.query(
      `SELECT r.step_name, r.attempt, d.step_name AS dependency, d.status AS dependency_status,
              r.started_at, d.completed_at
       FROM flow_runs r
         JOIN job_queue.jobs j ON j.id = r.job_id
         JOIN job_queue.job_dependencies e ON e.job_id = r.job_id
         JOIN job_queue.jobs d ON d.id = e.dependency_id
       WHERE j.flow_id = $1
         AND (d.status NOT IN ('completed', 'failed', 'cancelled') OR d.completed_at IS NULL
              OR r.started_at <= d.completed_at)`,
      [flowId],
    );

  /** The flow's span on the database's clock: its first insert to its last completion. */
  const flowSpanMs = async (flowId: string): Promise<number> => {
    const [{ ms }] = await fleet.dataSource.query(
      `SELECT round(extract(epoch FROM max(completed_at) - min(created_at)) * 1000)::int AS ms
       FROM job_queue.jobs WHERE flow_id = $1`,
      [flowId],
    );
    return ms;
  };

  it('runs a tree of 1 + 20 + 200 jobs in dependency order, each merge seeing its children', async () => {
    const leafValues = Array.from({ length: 20 }, (_, m) =>
      Array.from({ length: 10 }, (_, l) => m * 100 + l + 1),
    );
    const { flowId, jobs } = await fleet.queue.flow(mergeTree(leafValues));
    expect(jobs).toHaveLength(221);
    expect(jobs.filter((job) => job.status === JobStatus.Blocked)).toHaveLength(21);

    const [byStep] = await waitUntilFinished([flowId]);
    const statuses = [...byStep.values()].map((job) => job.status);
    expect(statuses.filter((status) => status === JobStatus.Completed)).toHaveLength(221);

    expect(await earlyStarts(flowId)).toEqual([]);
    const runs = await flowRuns(flowId);
    // One run per attempt of each job (no run lost, none the row does not know of).
    const runsOf = (id: string) => runs.filter((run) => run.job_id === id);
    for (const job of byStep.values()) expect(runsOf(job.id)).toHaveLength(job.attempts);

    for (let m = 0; m < 20; m++) {
      const mid = byStep.get(`root.${m}`)!;
      const children = leafValues[m].map((_, l) => `root.${m}.${l}`).sort();
      for (const run of runsOf(mid.id)) {
        expect(run).toMatchObject({ seen_steps: children, failed: [] });
      }
      expect(mid.result).toEqual({ sum: sum(leafValues[m]), leaves: 10 });
    }
    const root = byStep.get('root')!;
    const mids = leafValues.map((_, m) => `root.${m}`).sort();
    expect(runsOf(root.id)).toEqual([
      expect.objectContaining({ attempt: 1, seen_steps: mids, failed: [] }),
    ]);
    expect(root.result).toEqual({ sum: sum(leafValues.flat()), leaves: 200 });

    const perWorker = new Map<string, number>();
    for (const run of runs) perWorker.set(run.worker_id, (perWorker.get(run.worker_id) ?? 0) + 1);
    console.log(
      `tree of 221 jobs: ${runs.length} runs in ${await flowSpanMs(flowId)} ms (database clock); ` +
        `runs per worker: ${[...perWorker].map(([id, n]) => `${id}=${n}`).join(', ')}`,
    );
    expect([...perWorker.keys()].sort()).toEqual(WORKER_IDS);
  });

  it("fails a failed leaf's ancestors without running them under 'fail'; runs its parent under 'continue'", async () => {
    // Leaf root.1.2 fails its one attempt, in two trees of 1 + 3 + 12 jobs, one per policy.
    const leafValues = Array.from({ length: 3 }, (_, m) =>
      Array.from({ length: 4 }, (_, l) => m * 10 + l + 1),
    );
    const failing = (m: number, l: number): Partial<FlowNode> =>
      m === 1 && l === 2 ? { data: { value: leafValues[m][l], fail: true }, maxAttempts: 1 } : {};
    const [failFlow, continueFlow] = await Promise.all([
      fleet.queue.flow(mergeTree(leafValues, failing, 'fail')),
      fleet.queue.flow(mergeTree(leafValues, failing, 'continue')),
    ]);
    const [onFail, onContinue] = await waitUntilFinished([failFlow.flowId, continueFlow.flowId]);
    const runsOnFail = await flowRuns(failFlow.flowId);
    const runsOnContinue = await flowRuns(continueFlow.flowId);
    const ranSteps = (runs: FlowRunRow[]) => runs.map((run) => run.step_name);

    for (const [byStep, runs] of [
      [onFail, runsOnFail],
      [onContinue, runsOnContinue],
    ] as const) {
      const leaf = byStep.get('root.1.2')!;
      expect(leaf).toMatchObject({ status: JobStatus.Failed, attempts: 1 });
      expect(leaf.last_error).toMatch(/leaf root\.1\.2 fails for good/);
      expect(ranSteps(runs).filter((step) => step === 'root.1.2')).toHaveLength(1);
    }

    // 'fail': root.1 and the root fail, never run; the other subtrees and root.1's other leaves
    // complete.
    const leafOnFail = onFail.get('root.1.2')!;
    const midOnFail = onFail.get('root.1')!;
    expect(midOnFail).toMatchObject({
      status: JobStatus.Failed,
      attempts: 0,
      last_error: `Dependency ${leafOnFail.id} (flow.leaf) failed`,
    });
    expect(onFail.get('root')).toMatchObject({
      status: JobStatus.Failed,
      attempts: 0,
      last_error: `Dependency ${midOnFail.id} (flow.merge) failed`,
    });
    expect(ranSteps(runsOnFail)).not.toContain('root.1');
    expect(ranSteps(runsOnFail)).not.toContain('root');
    const completedOnFail = [...onFail.values()]
      .filter((job) => job.status === JobStatus.Completed)
      .map((job) => job.step_name)
      .sort();
    expect(completedOnFail).toEqual(
      [
        'root.0',
        'root.2',
        ...leafValues.flatMap((values, m) => values.map((_, l) => `root.${m}.${l}`)),
      ]
        .filter((step) => step !== 'root.1.2')
        .sort(),
    );
    expect(await earlyStarts(failFlow.flowId)).toEqual([]);

    // 'continue': root.1 runs once all four children finished, and is told which one failed.
    const leafOnContinue = onContinue.get('root.1.2')!;
    const midOnContinue = onContinue.get('root.1')!;
    expect(midOnContinue).toMatchObject({
      status: JobStatus.Completed,
      attempts: 1,
      result: { sum: sum(leafValues[1]) - leafValues[1][2], leaves: 3 },
    });
    expect(runsOnContinue.filter((run) => run.step_name === 'root.1')).toEqual([
      expect.objectContaining({
        seen_steps: ['root.1.0', 'root.1.1', 'root.1.2', 'root.1.3'],
        failed: [
          {
            jobId: leafOnContinue.id,
            stepName: 'root.1.2',
            type: 'flow.leaf',
            status: JobStatus.Failed,
            result: null,
            error: expect.stringMatching(/leaf root\.1\.2 fails for good/),
          },
        ],
      }),
    ]);
    expect(onContinue.get('root')).toMatchObject({
      status: JobStatus.Completed,
      result: { sum: sum(leafValues.flat()) - leafValues[1][2], leaves: 11 },
    });
    expect(await earlyStarts(continueFlow.flowId)).toEqual([]);
  });

  it('loses nothing of a flow when a worker is SIGKILLed while running its leaves', async () => {
    // 30 leaves of 1 s each, 10 running on each worker at most.
    const leafValues = Array.from({ length: 3 }, (_, m) =>
      Array.from({ length: 10 }, (_, l) => m * 100 + l + 1),
    );
    const { flowId } = await fleet.queue.flow(
      mergeTree(leafValues, (m, l) => ({ data: { value: leafValues[m][l], ms: 1_000 } })),
    );
    // The victim: the worker running most of the flow's leaves once some have started (a run
    // recorded, the job still running).
    const busiest = await waitFor(
      async () => {
        const rows: Array<{ worker_id: string }> = await fleet.dataSource.query(
          `SELECT r.worker_id FROM flow_runs r JOIN job_queue.jobs j ON j.id = r.job_id
           WHERE j.flow_id = $1 AND j.status = 'running' AND j.worker_id = r.worker_id
           GROUP BY r.worker_id ORDER BY count(*) DESC LIMIT 1`,
          [flowId],
        );
        return rows[0]?.worker_id;
      },
      { timeoutMs: 15_000, description: 'a worker running leaves of the flow' },
    );
    const victim = fleet.workers.find((worker) => worker.workerId === busiest)!;
    const survivors = WORKER_IDS.filter((id) => id !== victim.workerId);
    const heldByVictim = async (): Promise<Array<{ id: string }>> =>
      fleet.dataSource.query(
        `SELECT id::text FROM job_queue.jobs
         WHERE flow_id = $1 AND worker_id = $2 AND status IN ('claimed', 'running')`,
        [flowId, victim.workerId],
      );
    victim.kill('SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const lost = new Set((await heldByVictim()).map((job) => job.id));
    expect(lost.size).toBeGreaterThan(0);

    const [byStep] = await waitUntilFinished(
      [flowId],
      STALE_AFTER_MS + REAPER_INTERVAL_MS + 30_000,
    );
    expect([...byStep.values()].filter((job) => job.status !== JobStatus.Completed)).toEqual([]);

    // Each job the victim held (started, or claimed and not started yet) ran again, once, on a
    // survivor; every other job ran once.
    const runs = await flowRuns(flowId);
    for (const job of byStep.values()) {
      const attempts = runs.filter((run) => run.job_id === job.id);
      if (lost.has(job.id)) {
        expect(job.attempts).toBe(2);
        expect(attempts.filter((run) => run.attempt === 1).length).toBeLessThanOrEqual(1);
        expect(
          attempts.filter((run) => run.attempt === 1 && run.worker_id !== victim.workerId),
        ).toEqual([]);
        const reruns = attempts.filter((run) => run.attempt === 2);
        expect(reruns).toHaveLength(1);
        expect(survivors).toContain(reruns[0].worker_id);
      } else {
        expect(job.attempts).toBe(1);
        expect(attempts).toHaveLength(1);
      }
    }

    // The root ran once, after every other job of the flow had completed, and counted each leaf
    // once.
    const root = byStep.get('root')!;
    expect(runs.filter((run) => run.job_id === root.id)).toEqual([
      expect.objectContaining({ attempt: 1, seen_steps: ['root.0', 'root.1', 'root.2'] }),
    ]);
    const [{ last_before_root }] = await fleet.dataSource.query(
      `SELECT bool_and(j.completed_at < r.started_at) AS last_before_root
       FROM job_queue.jobs j, flow_runs r
       WHERE j.flow_id = $1 AND j.id <> $2 AND r.job_id = $2`,
      [flowId, root.id],
    );
    expect(last_before_root).toBe(true);
    expect(root.result).toEqual({ sum: sum(leafValues.flat()), leaves: 30 });
    expect(await earlyStarts(flowId)).toEqual([]);
    console.log(
      `SIGKILL mid-flow: ${lost.size} jobs taken back from ${victim.workerId} and re-run; ` +
        `the flow of 34 jobs took ${await flowSpanMs(flowId)} ms (database clock)`,
    );
  });

  describe('a dependant enqueued while its dependency completes', () => {
    const ROUNDS = 240;
    const TIME_BUDGET_MS = 10_000;
    let holder: Client;
    let holderPid: number;

    beforeAll(async () => {
      holder = new Client({ connectionString: fleet.databaseUrl });
      await holder.connect();
      [{ pid: holderPid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
    });

    afterAll(() => holder?.end());

    /** A job nobody handles, made `running` as a worker's claim would. */
    async function runningDependency(round: number): Promise<Job> {
      const job = await fleet.queue.enqueue('race.dependency', { round });
      await fleet.dataSource.query(
        `UPDATE job_queue.jobs SET status = 'running', attempts = 1, worker_id = 'race-holder',
                claimed_at = now(), started_at = now(), heartbeat_at = now()
         WHERE id = $1`,
        [job.id],
      );
      return job;
    }

    const COMPLETE = `UPDATE job_queue.jobs SET status = 'completed', completed_at = now(), result = '{}'
                      WHERE id = $1 AND status = 'running'`;

    const enqueueDependant = (dependency: Job, round: number) =>
      fleet.queue.enqueue('race.dependant', { round }, { dependsOn: [dependency.id] });

    /**
     * Waits until a backend of the database waits for a lock held by `blocker`, or `settled`
     * says the statement that would wait finished; returns whether it waited.
     */
    async function waitedForLock(blocker: number, settled: () => boolean): Promise<boolean> {
      return waitFor(
        async () => {
          const [{ waiting }] = await fleet.dataSource.query(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND $1 = ANY (pg_catalog.pg_blocking_pids(pid))`,
            [blocker],
          );
          return waiting > 0 ? 'waited' : settled() ? 'settled' : undefined;
        },
        { intervalMs: 2, timeoutMs: 5_000, description: `a wait for backend ${blocker}'s lock` },
      ).then((outcome) => outcome === 'waited');
    }

    /** Started together, each in its own connection: whichever gets there first. */
    async function together(round: number): Promise<Job> {
      const dependency = await runningDependency(round);
      const [, dependant] = await Promise.all([
        holder.query(COMPLETE, [dependency.id]),
        enqueueDependant(dependency, round),
      ]);
      return dependant;
    }

    /** The completion holds the row, uncommitted, while the enqueue starts; then commits. */
    async function completionFirst(round: number): Promise<{ dependant: Job; waited: boolean }> {
      const dependency = await runningDependency(round);
      await holder.query('BEGIN');
      let enqueued: Promise<Job> | undefined;
      let waited = false;
      try {
        await holder.query(COMPLETE, [dependency.id]);
        let settled = false;
        enqueued = enqueueDependant(dependency, round).finally(() => {
          settled = true;
        });
        enqueued.catch(() => undefined);
        waited = await waitedForLock(holderPid, () => settled);
      } finally {
        // After an error in it, COMMIT rolls the transaction back.
        await holder.query('COMMIT');
      }
      return { dependant: await enqueued, waited };
    }

    /** The enqueue's transaction holds the row, uncommitted, while the completion starts. */
    async function enqueueFirst(round: number): Promise<{ dependant: Job; waited: boolean }> {
      const dependency = await runningDependency(round);
      const runner = fleet.dataSource.createQueryRunner();
      await runner.connect();
      try {
        const [{ pid }] = await runner.query('SELECT pg_backend_pid() AS pid');
        await runner.startTransaction();
        const dependant = await fleet.queue.enqueue(
          'race.dependant',
          { round },
          { dependsOn: [dependency.id], manager: runner.manager },
        );
        expect(dependant.status).toBe(JobStatus.Blocked);
        let settled = false;
        const completed = holder.query(COMPLETE, [dependency.id]).finally(() => {
          settled = true;
        });
        completed.catch(() => undefined);
        const waited = await waitedForLock(pid, () => settled);
        await runner.commitTransaction();
        await completed;
        return { dependant, waited };
      } finally {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }

    it('never leaves it blocked, whichever commits first', async () => {
      const deadline = Date.now() + TIME_BUDGET_MS;
      const waits = { completionFirst: [] as boolean[], enqueueFirst: [] as boolean[] };
      const dependants: Array<{ id: string; order: string; enqueuedAs: string }> = [];
      let round = 0;
      for (; round < ROUNDS && Date.now() < deadline; round++) {
        if (round % 3 === 0) {
          const dependant = await together(round);
          dependants.push({ id: dependant.id, order: 'together', enqueuedAs: dependant.status });
        } else if (round % 3 === 1) {
          const { dependant, waited } = await completionFirst(round);
          waits.completionFirst.push(waited);
          dependants.push({
            id: dependant.id,
            order: 'completion first',
            enqueuedAs: dependant.status,
          });
        } else {
          const { dependant, waited } = await enqueueFirst(round);
          waits.enqueueFirst.push(waited);
          dependants.push({
            id: dependant.id,
            order: 'enqueue first',
            enqueuedAs: dependant.status,
          });
        }
      }
      expect(round).toBeGreaterThanOrEqual(60);
      // Each forced order really raced: the second statement waited on the first one's row lock.
      expect(waits.completionFirst.every(Boolean)).toBe(true);
      expect(waits.enqueueFirst.every(Boolean)).toBe(true);
      // Waiting for the completion to commit, the enqueue read the dependency completed.
      const enqueuedAs = (order: string) =>
        dependants.filter((d) => d.order === order).map((d) => d.enqueuedAs);
      expect(new Set(enqueuedAs('completion first'))).toEqual(new Set([JobStatus.Pending]));
      expect(new Set(enqueuedAs('enqueue first'))).toEqual(new Set([JobStatus.Blocked]));

      const ids = dependants.map((d) => d.id);
      const states: Array<{ id: string; order: string; status: string }> = (
        await fleet.dataSource.query(
          `SELECT id::text, status FROM job_queue.jobs WHERE id = ANY ($1::bigint[])`,
          [ids],
        )
      ).map((row: { id: string; status: string }) => ({
        ...row,
        order: dependants.find((d) => d.id === row.id)!.order,
      }));
      expect(states).toHaveLength(round);
      // Pending at once, whichever committed first: the trigger compares the dependant's run_at
      // (its enqueue's now()) with the clock, not with its own transaction's start, which may
      // be earlier (the completion began, then waited for the enqueue to commit).
      expect(states.filter((s) => s.status !== JobStatus.Pending)).toEqual([]);
    });
  });
});

import { Client } from 'pg';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { JobStatus } from '../../libs/job-queue/src/entities/job-status.enum';
import { finishJobs, JobOutcome } from '../../libs/job-queue/src/sql/finish-jobs.query';
import { JobLogRow } from '../../libs/job-queue/src/sql/job-log-rows';
import { readJobLog } from '../../libs/job-queue/src/sql/job-log.query';
import { updateRunProgress } from '../../libs/job-queue/src/sql/update-progress.query';
import { cancelJobRow } from '../../libs/job-queue/src/sql/cancel-job.query';
import { Queryable } from '../../libs/job-queue/src/sql/queryable';
import { createTestDatabase, TestDatabase } from '../support/database';
import { blocksOf, JsonPlanNode, nodesOf } from '../support/json-plan';

const FINISHED = 1_000_000;
const RUNNING = 50;
const WORKER = 'plan-worker';
/** The indexes a keyed read may go through (see `expectKeyedAccess`). */
const KEYED_INDEXES = /^(jobs_pkey|job_events_pkey|jobs_lease_idx)$/;

/**
 * The statements that write and read a job's log, on a million finished jobs that each have a
 * row in it: every one finds its rows by primary key (jobs_pkey, job_events_pkey), scans neither
 * table and touches a few buffers per job, however big both tables are.
 */
describe("a job's log: plans with a million finished jobs and their rows", () => {
  let db: TestDatabase;
  let client: Client;
  let running: Array<{ id: string; run_token: number }>;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, run_token, created_at,
                                   completed_at, events_count)
       SELECT 'report', 'completed', 1, 1, now() - interval '1 day', now() - interval '1 day', 1
       FROM generate_series(1, $1::int)`,
      [FINISHED],
    );
    await client.query(
      `INSERT INTO job_queue.job_events (job_id, run_token, attempt, at, kind)
       SELECT id, 1, 1, completed_at, 'completed' FROM job_queue.jobs`,
    );
    ({ rows: running } = await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, worker_id, attempts, run_token, claimed_at,
                                   heartbeat_at)
       SELECT 'report', 'running', $2::text, 1, 1, now(), now() FROM generate_series(1, $1::int)
       RETURNING id::text, run_token`,
      [RUNNING, WORKER],
    ));
    await client.query('VACUUM ANALYZE job_queue.jobs, job_queue.job_events');
  }, 300_000);

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  /**
   * Runs `call` against a Queryable that EXPLAINs (ANALYZE, BUFFERS) each statement it is sent
   * with its parameters, in a transaction rolled back after: the plans of what it sent.
   */
  async function plansOf(call: (db: Queryable) => Promise<unknown>): Promise<JsonPlanNode[]> {
    const plans: JsonPlanNode[] = [];
    const explaining: Queryable = {
      query: async (sql, parameters) => {
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
          parameters,
        );
        plans.push(rows[0]['QUERY PLAN'][0].Plan as JsonPlanNode);
        return [];
      },
    };
    await client.query('BEGIN');
    try {
      await call(explaining);
    } finally {
      await client.query('ROLLBACK');
    }
    expect(plans.length).toBeGreaterThan(0);
    return plans;
  }

  function expectKeyedAccess(plan: JsonPlanNode, maxBlocks: number): void {
    const nodes = [...nodesOf(plan)];
    // A table is read by key: through a primary key, or through jobs_lease_idx, which holds only
    // the held jobs (PostgreSQL 17 picks it for the writes of held runs); by an index scan or a
    // bitmap built from one (the planner's choice for a batch of ids); never sequentially.
    const seqScans = nodes.filter((node) => node['Node Type'] === 'Seq Scan');
    expect(seqScans.map((node) => node['Relation Name'])).toEqual([]);
    const indexes = nodes
      .filter((node) => /^(Index|Index Only|Bitmap Index) Scan$/.test(node['Node Type']))
      .map((node) => node['Index Name']);
    expect(indexes.filter((name) => !KEYED_INDEXES.test(name ?? ''))).toEqual([]);
    // Joins between the statement's own rows (its arrays, its CTEs) may hash: they are a batch.
    expect(blocksOf(plan)).toBeLessThan(maxBlocks);
  }

  const line = (jobId: string, n: number): JobLogRow => ({
    jobId,
    attempt: 1,
    at: new Date(),
    kind: 'log',
    message: `line ${n}`,
    dataJson: '{"n": 1}',
  });

  it('reads a page of one finished job’s log by primary key', async () => {
    const [plan] = await plansOf((db) => readJobLog(db, DEFAULT_SCHEMA, '500000', '0', 100));
    expectKeyedAccess(plan, 20);
  });

  it('writes a run’s lines with its progress by primary key', async () => {
    const { id, run_token } = running[0];
    const rows = [line(id, 1), line(id, 2), line(id, 3)];
    const [plan] = await plansOf((db) =>
      updateRunProgress(db, DEFAULT_SCHEMA, id, run_token, { progress: 40, stage: 'x', rows }),
    );
    expectKeyedAccess(plan, 60);
  });

  it('writes 50 outcomes with their lines and own rows in a few buffers per job', async () => {
    const outcomes: JobOutcome[] = running.map(({ id, run_token }) => ({
      id,
      runToken: run_token,
      status: JobStatus.Completed,
      resultJson: '{}',
      lastError: null,
      retryDelayMs: null,
      progress: null,
      stage: null,
      logRows: [line(id, 1), line(id, 2)],
      logOutcome: true,
    }));
    const [plan] = await plansOf((db) => finishJobs(db, DEFAULT_SCHEMA, WORKER, outcomes));
    expectKeyedAccess(plan, RUNNING * 40);
  });

  it('cancels a running job, looking up its claimed row by primary key', async () => {
    const [plan] = await plansOf((db) => cancelJobRow(db, DEFAULT_SCHEMA, running[1].id));
    expectKeyedAccess(plan, 40);
  });
});

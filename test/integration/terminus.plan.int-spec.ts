import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { Queryable } from '../../libs/job-queue/src/sql/queryable';
import {
  failedSince,
  longestDueWaitMs,
  staleJobsExist,
} from '../../libs/job-queue/src/terminus/health.queries';
import { blocksOf, explainAnalyze, JsonPlanNode, nodesOf, readThrough } from '../support/json-plan';
import { PlanTestDatabase, usePlanTestDatabase } from '../support/plan-template';
import { capturedStatement } from '../support/captured-statement';

/** A health query function's call, on whatever runs its statement. */
type HealthQuery<T> = (db: Queryable) => Promise<T>;

/** The statement and parameters `call` sends, captured without running it. */
function statementOf(call: HealthQuery<unknown>): Promise<[string, unknown[]]> {
  return capturedStatement(call, [{}]);
}

/**
 * EXPLAIN ANALYZE (rolled back) of exactly what `call` sends: the function's own statement and
 * parameters, planned with their values as the driver's unnamed statements are.
 */
async function explainCall(db: PlanTestDatabase, call: HealthQuery<unknown>) {
  const [sql, params] = await statementOf(call);
  return explainAnalyze(db.client, sql, params);
}

/** `call`'s answer, run for real against the plan database. */
const answer = <T>(db: PlanTestDatabase, call: HealthQuery<T>): Promise<T> =>
  call({ query: async (sql, params) => (await db.client.query(sql, params)).rows });

/** Every read of `jobs` in the plan goes through `indexName`: no other index, no table scan. */
function expectOnlyThrough(plan: JsonPlanNode, indexName: string): void {
  const reads = [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'jobs');
  expect(reads.length).toBeGreaterThan(0);
  for (const node of reads) {
    expect({ node: node['Node Type'], index: node['Index Name'] }).toEqual({
      node: expect.stringMatching(/^Index (Only )?Scan$/),
      index: indexName,
    });
  }
}

/**
 * The statements behind the indicator's thresholds run at every probe, on the table a busy queue
 * has: each must read a few index entries per job type, never the finished rows or the backlog.
 * Block counts are bounds, far under a read of the table (thousands of blocks).
 */
describe('terminus health queries beside a million finished jobs', () => {
  const db = usePlanTestDatabase('finished');
  const schema = DEFAULT_SCHEMA;
  /** The shape's types ('email', 'report', 'other') all have finished rows. */
  const FINISHED_TYPES = 3;

  beforeAll(async () => {
    // 100,000 old failures of one type, 1,000 recent ones of another, 1,000 held jobs whose
    // heartbeats are fresh.
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at, last_error)
       SELECT 'report', 'failed', 1, now() - interval '2 days' + g * interval '1 ms', 'old'
       FROM generate_series(1, 100000) AS g`,
    );
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at, last_error)
       SELECT 'email', 'failed', 1, now() - g * interval '1 ms', 'recent'
       FROM generate_series(1, 1000) AS g`,
    );
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, worker_id, claimed_at, heartbeat_at)
       SELECT 'email', 'running', 1, 'live-worker', now(), now()
       FROM generate_series(1, 1000) AS g`,
    );
    await db.client.query(`VACUUM ANALYZE job_queue.jobs`);
  }, 120_000);

  it('maxFailed reads at most count + 1 failures of each type, through jobs_finished_idx', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const recent: HealthQuery<number> = (q) => failedSince(q, schema, hourAgo, 6);
    expect(await answer(db, recent)).toBe(6); // 1,000 recent failures, counted up to 6
    // A period that takes in the 100,000 old ones too: still count + 1 per type at most.
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
    const all: HealthQuery<number> = (q) => failedSince(q, schema, threeDaysAgo, 11);
    expect(await answer(db, all)).toBe(22);

    for (const [call, atMost] of [
      [recent, 6],
      [all, 11],
    ] as const) {
      const plan = await explainCall(db, call);
      expectOnlyThrough(plan, 'jobs_finished_idx');
      const { rows, removed } = readThrough(plan, 'jobs_finished_idx');
      // The skip scan's descents (a row per type, and the end) and each type's failures.
      expect(rows).toBeLessThanOrEqual(FINISHED_TYPES + 1 + FINISHED_TYPES * atMost);
      expect(removed).toBe(0);
      expect(blocksOf(plan)).toBeLessThan(200);
    }
  });

  it('failOnStaleJobs stops at the first entry of jobs_lease_idx past the lease', async () => {
    const stale: HealthQuery<boolean> = (q) => staleJobsExist(q, schema, 60_000);
    expect(await answer(db, stale)).toBe(false); // 1,000 held, all heartbeating
    const plan = await explainCall(db, stale);
    expectOnlyThrough(plan, 'jobs_lease_idx');
    expect(readThrough(plan, 'jobs_lease_idx').rows).toBe(0);
    expect(blocksOf(plan)).toBeLessThan(20);

    // A lease gone by, then (as the reaper ages them) a held row without a heartbeat.
    const [{ id }] = (
      await db.client.query<{ id: string }>(
        `INSERT INTO job_queue.jobs (job_type, status, attempts, worker_id, claimed_at,
                                     heartbeat_at)
         VALUES ('email', 'running', 1, 'gone', now() - interval '1 hour',
                 now() - interval '1 hour') RETURNING id`,
      )
    ).rows;
    expect(await answer(db, stale)).toBe(true);
    await db.client.query(`UPDATE job_queue.jobs SET heartbeat_at = NULL WHERE id = $1`, [id]);
    expect(await answer(db, stale)).toBe(true);
    const found = await explainCall(db, stale);
    expectOnlyThrough(found, 'jobs_lease_idx');
    expect(readThrough(found, 'jobs_lease_idx').rows).toBe(1);
    await db.client.query(`DELETE FROM job_queue.jobs WHERE id = $1`, [id]);
    expect(await answer(db, stale)).toBe(false);
  });

  it('maxDueWaitMs reads the head of each type through jobs_claim_idx', async () => {
    const wait: HealthQuery<number | null> = (q) => longestDueWaitMs(q, schema);
    expect(await answer(db, wait)).toBeGreaterThan(0);
    const plan = await explainCall(db, wait);
    expectOnlyThrough(plan, 'jobs_claim_idx');
    expect(readThrough(plan, 'jobs_claim_idx').rows).toBeLessThanOrEqual(2 * 2 + 1);
    expect(blocksOf(plan)).toBeLessThan(200);
  });
});

describe('terminus health queries beside a backlog of a million pending jobs', () => {
  const db = usePlanTestDatabase('tenTypes');
  const TYPES = 10;

  it('maxDueWaitMs reads the head of each of the ten types, not the backlog', async () => {
    const wait: HealthQuery<number | null> = (q) => longestDueWaitMs(q, DEFAULT_SCHEMA);
    expect(await answer(db, wait)).toBeGreaterThan(0);
    const plan = await explainCall(db, wait);
    expectOnlyThrough(plan, 'jobs_claim_idx');
    const { rows, removed } = readThrough(plan, 'jobs_claim_idx');
    // A descent per type and the end, then each type's head.
    expect(rows).toBeLessThanOrEqual(TYPES + 1 + TYPES);
    expect(removed).toBe(0);
    expect(blocksOf(plan)).toBeLessThan(200);
  });
});

import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { blockedDependantsSql } from '../../libs/job-queue/src/sql/functions/resolve-dependants.v1';
import { readDependencyResults } from '../../libs/job-queue/src/sql/dependency-results.query';
import { claimStatementCalls } from './claim-job-batch.support';
import { usePlanTestDatabase } from '../support/plan-template';
import { blocksOf, explainAnalyze, functionSettings, readThrough } from '../support/json-plan';
import { capturedStatement } from '../support/captured-statement';

const BLOCKED = 200_000;

/** The statement `readDependencyResults` sends, captured without running it. */
function dependencyResultsStatement(jobId: string): Promise<[string, unknown[]]> {
  return capturedStatement((db) => readDependencyResults(db, DEFAULT_SCHEMA, jobId));
}

/**
 * Dependencies beside a million finished jobs and 200,000 blocked ones of a claimed type (each
 * waiting for one running job, ahead of the ready jobs in the claim's order): the claim reads
 * none of the blocked; what runs per job with dependencies (its results, a finished job's
 * dependants) reads its own edges by index. The bench's `claim` case `blocked` times the claim
 * beside a million.
 */
describe('job dependency plans beside a million finished jobs', () => {
  const db = usePlanTestDatabase('finished');
  const schema = queueSchema(DEFAULT_SCHEMA);
  let dependency: string;
  let lone: { dependency: string; dependant: string };
  /** Blocks each of the claim's statements read before the blocked jobs were added. */
  let claimBlocksBefore: number[];

  const explainClaims = async () => {
    const settings = await functionSettings(db.client, 'job_queue.claim_job_batch');
    return Promise.all(
      claimStatementCalls(['email'], 10).map(async ({ label, sql, params }) => ({
        label,
        plan: await explainAnalyze(db.client, sql, params, settings),
      })),
    );
  };

  beforeAll(async () => {
    claimBlocksBefore = (await explainClaims()).map(({ plan }) => blocksOf(plan));
    const { rows } = await db.client.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, run_token, worker_id, claimed_at,
                                   started_at, heartbeat_at, has_dependants)
       VALUES ('email', 'running', 1, 1, 'w', now(), now(), now(), true),
              ('email', 'running', 1, 1, 'w', now(), now(), now(), true)
       RETURNING id::text`,
    );
    dependency = rows[0].id;
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, priority, status, unfinished_dependencies,
                                   on_dependency_failure, created_at)
       SELECT 'email', 900, 'blocked', 1, 'fail', now() - interval '1 day'
       FROM generate_series(1, $1::int)`,
      [BLOCKED],
    );
    await db.client.query(
      `INSERT INTO job_queue.job_dependencies (dependency_id, job_id)
       SELECT $1::bigint, id FROM job_queue.jobs WHERE status = 'blocked'`,
      [dependency],
    );
    const { rows: one } = await db.client.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, status, unfinished_dependencies, on_dependency_failure)
       VALUES ('report', 'blocked', 1, 'fail') RETURNING id::text`,
    );
    lone = { dependency: rows[1].id, dependant: one[0].id };
    await db.client.query(
      `INSERT INTO job_queue.job_dependencies (dependency_id, job_id) VALUES ($1, $2)`,
      [lone.dependency, lone.dependant],
    );
    await db.client.query(`ANALYZE job_queue.jobs, job_queue.job_dependencies`);
  });

  it('the claim reads what it read before the blocked jobs, through jobs_claim_idx', async () => {
    const claims = await explainClaims();
    claims.forEach(({ label, plan }, i) => {
      expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: 10 });
      expect(readThrough(plan, 'jobs_claim_idx').removed).toBe(0);
      // The blocked jobs are in none of the claim's indexes: the same pages, give or take the
      // few a new version of the statistics moves.
      expect(blocksOf(plan)).toBeLessThanOrEqual(claimBlocksBefore[i] + 10);
    });
  });

  it("a job's dependency results read its edges by job_dependencies_job_idx, then the jobs by key", async () => {
    const [sql, params] = await dependencyResultsStatement(lone.dependant);
    const plan = await explainAnalyze(db.client, sql, params);
    expect(plan['Actual Rows']).toBe(1);
    expect(readThrough(plan, 'job_dependencies_job_idx').rows).toBe(1);
    expect(readThrough(plan, 'jobs_pkey').rows).toBe(1);
    expect(blocksOf(plan)).toBeLessThan(20);
  });

  it("a finished job's blocked dependants are read by job_dependencies_pkey: its own only", async () => {
    const sql = blockedDependantsSql(schema, '$1::bigint');
    const settings = await functionSettings(db.client, 'job_queue.jobs_resolve_dependants');
    expect(settings).toMatchObject({ plan_cache_mode: 'force_custom_plan' });
    const plan = await explainAnalyze(db.client, sql, [lone.dependency], settings);
    expect(plan['Actual Rows']).toBe(1);
    expect(readThrough(plan, 'job_dependencies_pkey').rows).toBe(1);
    expect(blocksOf(plan)).toBeLessThan(20);
    // The one with 200,000 dependants may read the table: a fifth of it moves. The function
    // plans each call for its own job, so that plan is never cached for the others.
    const wide = await explainAnalyze(db.client, sql, [dependency], settings);
    expect(wide['Actual Rows']).toBe(BLOCKED);
  });
});

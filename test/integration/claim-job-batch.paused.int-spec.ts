import { CURRENT_CLAIM_JOB_BATCH_QUERY } from '../../libs/job-queue/src/sql/functions/current-functions';
import { claim, CLAIM_PARAMETER_TYPES, useClaimTestDatabase } from './claim-job-batch.support';

/** Three types, three pending jobs each; `a` best, then `b`, then `c` (priority). */
const INSERT_JOBS = `
  INSERT INTO job_queue.jobs (job_type, priority)
  SELECT t.job_type, t.priority FROM (VALUES ('a', 300), ('b', 200), ('c', 100)) AS t(job_type, priority)
    CROSS JOIN generate_series(1, 3)`;

const typesOf = (rows: Array<{ job_type: string }>): string[] => rows.map((row) => row.job_type);

/**
 * `claim_job_batch` skips a type whose `job_types` row has `paused_at` set; a type without a row,
 * or whose row has `paused_at` NULL (resumed), is claimed as before. Every claim runs in a
 * transaction rolled back after it, so each sees the same nine jobs.
 */
describe('claim_job_batch: paused job types', () => {
  const db = useClaimTestDatabase();

  beforeAll(async () => {
    await db.client.query(INSERT_JOBS);
  });

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.job_types`);
  });

  async function claimRolledBack(jobTypes: string[], batchSize: number): Promise<string[]> {
    await db.client.query('BEGIN');
    try {
      return typesOf(await claim(db.client, 'w', jobTypes, batchSize));
    } finally {
      await db.client.query('ROLLBACK');
    }
  }

  const setPaused = (jobType: string, paused: boolean) =>
    db.client.query(
      `INSERT INTO job_queue.job_types (job_type, paused_at) VALUES ($1, CASE WHEN $2 THEN now() END)
       ON CONFLICT (job_type) DO UPDATE SET paused_at = EXCLUDED.paused_at`,
      [jobType, paused],
    );

  it('claims every type when none is paused (rows or not)', async () => {
    expect(await claimRolledBack(['a', 'b', 'c'], 9)).toEqual([
      ...['a', 'a', 'a'],
      ...['b', 'b', 'b'],
      ...['c', 'c', 'c'],
    ]);
    await setPaused('a', false);
    expect(await claimRolledBack(['a', 'b', 'c'], 4)).toEqual(['a', 'a', 'a', 'b']);
  });

  it('skips a paused type; the others fill the batch in their usual order', async () => {
    await setPaused('b', true);
    expect(await claimRolledBack(['a', 'b', 'c'], 5)).toEqual(['a', 'a', 'a', 'c', 'c']);
    expect(await claimRolledBack(['b'], 10)).toEqual([]);
  });

  it('a paused type named twice, or every type paused: nothing', async () => {
    await setPaused('a', true);
    await setPaused('c', true);
    expect(await claimRolledBack(['a', 'a', 'c'], 10)).toEqual([]);
    expect(await claimRolledBack(['a', 'b', 'c'], 10)).toEqual(['b', 'b', 'b']);
  });

  it('claims a resumed type again (paused_at back to NULL)', async () => {
    await setPaused('a', true);
    expect(await claimRolledBack(['a', 'c'], 2)).toEqual(['c', 'c']);
    await setPaused('a', false);
    expect(await claimRolledBack(['a', 'c'], 2)).toEqual(['a', 'a']);
  });

  it('reads job_types by its primary key, once per requested type (generic plan, 1,000 rows)', async () => {
    await db.client.query(
      `INSERT INTO job_queue.job_types (job_type, paused_at)
       SELECT 'type-' || g, CASE WHEN g % 2 = 0 THEN now() END FROM generate_series(1, 1000) AS g`,
    );
    await db.client.query(`ANALYZE job_queue.job_types`);
    await db.client.query('BEGIN');
    try {
      // The function's own settings, so the plan is the one it runs.
      await db.client.query(`SET LOCAL enable_bitmapscan = off`);
      await db.client.query(`SET LOCAL enable_sort = off`);
      await db.client.query(`SET LOCAL enable_hashjoin = off`);
      await db.client.query(`SET LOCAL enable_mergejoin = off`);
      await db.client.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      await db.client.query(
        `PREPARE paused_plan(${CLAIM_PARAMETER_TYPES}) AS ${CURRENT_CLAIM_JOB_BATCH_QUERY}`,
      );
      const { rows } = await db.client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN EXECUTE paused_plan('w', ARRAY['a', 'b', 'c'], 10, NULL, false, NULL, NULL, NULL,
                                     NULL, NULL, NULL, NULL, NULL, NULL)`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']);
      const readsJobTypes = plan.filter((line) => / on job_types\b/.test(line));
      expect(readsJobTypes).toHaveLength(1);
      expect(readsJobTypes[0]).toMatch(/Index Scan using job_types_pkey on job_types paused\b/);
      const probe = plan.findIndex((line) => line === readsJobTypes[0]);
      expect(plan[probe + 1]).toMatch(/Index Cond: \(job_type = t\.job_type\)/);
      // An anti join probing per requested type, not a scan of the table joined after.
      expect(plan.some((line) => /Nested Loop Anti Join/.test(line))).toBe(true);
    } finally {
      await db.client.query('ROLLBACK');
    }
  });
});

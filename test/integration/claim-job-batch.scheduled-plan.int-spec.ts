import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { PENDING_AGAIN_PAYLOAD, queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import {
  STAGE_BATCH_SIZE,
  STAGE_SCHEDULED_JOBS,
  stageScheduledJobs,
} from '../../libs/job-queue/src/sql/stage-scheduled-jobs.query';
import { claim, claimStatementCalls } from './claim-job-batch.support';
import { usePlanTestDatabase } from '../support/plan-template';
import { blocksOf, explainAnalyze, functionSettings, readThrough } from '../support/json-plan';

const SCHEDULED = 1_000_000;
const READY = 10;

const INSERT_READY = `
  INSERT INTO job_queue.jobs (job_type, priority, created_at)
  SELECT 'email', 100, now() - g * interval '1 ms' FROM generate_series(1, $1::int) AS g`;

describe('claim_job_batch: flat with a million jobs scheduled for later', () => {
  // A million scheduled jobs and 10 ready ones, analysed: a clone of a prepared template.
  const db = usePlanTestDatabase('scheduled');
  const analyze = (sql: string, params: unknown[], settings: Record<string, string> = {}) =>
    explainAnalyze(db.client, sql, params, settings);

  it('holds the rows the test is about', async () => {
    const { rows } = await db.client.query(
      `SELECT status, count(*)::int AS count FROM job_queue.jobs GROUP BY status ORDER BY status`,
    );
    expect(rows).toEqual([
      { status: 'pending', count: READY },
      { status: 'scheduled', count: SCHEDULED },
    ]);
  });

  it.each([
    ['without p_now', false],
    ['with p_now a second ahead', true],
  ])(
    'the claim (%s) reads the ready jobs through jobs_claim_idx and nothing of the million',
    async (_label, withNow) => {
      const now = withNow ? new Date(Date.now() + 1_000) : null;
      // Planned as the function plans it: with its SET clauses.
      const settings = await functionSettings(db.client, 'job_queue.claim_job_batch');
      for (const { label, sql, params } of claimStatementCalls(['email'], READY, now)) {
        const plan = await analyze(sql, params, settings);
        expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: READY });
        const { scans, rows, removed } = readThrough(plan, 'jobs_claim_idx');
        expect(scans).toBeGreaterThan(0);
        expect(rows).toBeLessThanOrEqual(READY);
        expect(removed).toBe(0);
        // The ten claimed rows, their index pages and heap pages: tens of blocks, not thousands.
        expect(blocksOf(plan)).toBeLessThan(200);
      }
    },
  );

  it('claims exactly the ready jobs, none of the million (though of better priority)', async () => {
    await db.client.query('BEGIN');
    try {
      const ready = await claim(db.client, 'w', ['email'], 100);
      expect(ready).toHaveLength(READY);
      expect(await claim(db.client, 'w', ['email'], 100)).toEqual([]);
    } finally {
      await db.client.query('ROLLBACK');
    }
  });

  it('the stager reads only due rows through jobs_scheduled_idx: none of the million yet', async () => {
    const schema = queueSchema(DEFAULT_SCHEMA);
    const plan = await analyze(schema.statement(STAGE_SCHEDULED_JOBS), [
      null,
      STAGE_BATCH_SIZE,
      schema.insertedChannel,
      PENDING_AGAIN_PAYLOAD,
    ]);
    const { scans, rows, removed } = readThrough(plan, 'jobs_scheduled_idx');
    expect(scans).toBeGreaterThan(0);
    expect(rows).toBe(0);
    expect(removed).toBe(0);
    expect(blocksOf(plan)).toBeLessThan(20);
    // And the library's own statement moves nothing.
    const rowsOf = {
      query: async (sql: string, params?: unknown[]) => (await db.client.query(sql, params)).rows,
    };
    expect(await stageScheduledJobs(rowsOf, DEFAULT_SCHEMA, null)).toBe(0);
  });

  it('with 2,000 more ready jobs, a claim of 10 still reads 10 rows of the index and none of the million', async () => {
    // Timings are the bench's: here, what the claim reads.
    await db.client.query(INSERT_READY, [2_000]);
    await db.client.query(`ANALYZE job_queue.jobs`);
    const settings = await functionSettings(db.client, 'job_queue.claim_job_batch');
    for (const { label, sql, params } of claimStatementCalls(['email'], 10)) {
      const plan = await analyze(sql, params, settings);
      expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: 10 });
      const { scans, rows, removed } = readThrough(plan, 'jobs_claim_idx');
      expect(scans).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(10);
      expect(removed).toBe(0);
      expect(blocksOf(plan)).toBeLessThan(200);
    }
  });
});

import {
  blocksOf,
  explainAnalyze,
  functionSettings,
  JsonPlanNode,
  nodesOf,
  readThrough,
} from '../support/json-plan';
import { PlanTestDatabase, usePlanTestDatabase } from '../support/plan-template';
import { claimStatementCalls } from './claim-job-batch.support';

const TEN_TYPES = Array.from({ length: 10 }, (_, i) => `t${i}`);

/** Each of the claim's statements, EXPLAINed with the settings the function runs them with. */
async function explainClaims(client: PlanTestDatabase['client'], types: string[], batch: number) {
  const settings = await functionSettings(client, 'job_queue.claim_job_batch');
  const plans: Array<[string, JsonPlanNode]> = [];
  for (const { label, sql, params } of claimStatementCalls(types, batch)) {
    plans.push([label, await explainAnalyze(client, sql, params, settings)]);
  }
  return plans;
}

const seqScansOfJobs = (plan: Parameters<typeof nodesOf>[0]) =>
  [...nodesOf(plan)].filter(
    (node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'jobs',
  );

describe('claim_job_batch: flat beside a million ready jobs of another type', () => {
  const db = usePlanTestDatabase('otherType');

  it('reads only the claimed type’s head of jobs_claim_idx, nothing of the million', async () => {
    for (const [label, plan] of await explainClaims(db.client, ['email'], 10)) {
      expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: 10 });
      const { scans, rows, removed } = readThrough(plan, 'jobs_claim_idx');
      expect(scans).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(10);
      expect(removed).toBe(0);
      expect(seqScansOfJobs(plan)).toEqual([]);
      expect(blocksOf(plan)).toBeLessThan(200);
    }
  });
});

describe('claim_job_batch: ten types claimed at once, each a backlog of 100,000', () => {
  const db = usePlanTestDatabase('tenTypes');

  it('reads a few entries of each type’s head, not the backlogs', async () => {
    for (const [label, plan] of await explainClaims(db.client, TEN_TYPES, 10)) {
      expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: 10 });
      const { scans, rows, removed } = readThrough(plan, 'jobs_claim_idx');
      expect(scans).toBeGreaterThan(0);
      // Each type's head (at most the batch) to merge, then the rows each type's share locks;
      // after cursors, a head per segment: the cursor's priority, and the ranges above and below.
      const segments = label === 'after cursors' ? 3 : 1;
      expect(rows).toBeLessThanOrEqual(TEN_TYPES.length * segments * 10 + 10);
      expect(removed).toBe(0);
      expect(seqScansOfJobs(plan)).toEqual([]);
      expect(blocksOf(plan)).toBeLessThan(1_000);
    }
  });

  it('claims the best ten of all types in the one order', async () => {
    await db.client.query('BEGIN');
    try {
      const { rows: best } = await db.client.query<{ id: string }>(
        `SELECT id::text FROM job_queue.jobs WHERE status = 'pending'
          ORDER BY priority DESC, created_at, id LIMIT 10`,
      );
      const { rows: claimed } = await db.client.query<{ id: string }>(
        `SELECT id::text FROM job_queue.claim_job_batch('w', $1::text[], 10)`,
        [TEN_TYPES],
      );
      expect(claimed.map((row) => row.id).sort()).toEqual(best.map((row) => row.id).sort());
    } finally {
      await db.client.query('ROLLBACK');
    }
  });
});

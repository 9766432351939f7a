import { readThroughput, Throughput } from '../../libs/job-queue/src/dashboard/throughput.query';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { blocksOf, explainAnalyze, nodesOf, readThrough } from '../support/json-plan';
import { PlanTestDatabase, usePlanTestDatabase } from '../support/plan-template';
import { capturedStatement } from '../support/captured-statement';

/** The statement and parameters `readThroughput` sends, captured without running it. */
function statementOf(cap: number): Promise<[string, unknown[]]> {
  return capturedStatement((db) => readThroughput(db, DEFAULT_SCHEMA, cap));
}

const answer = (db: PlanTestDatabase, cap: number): Promise<Throughput> =>
  readThroughput(
    { query: async (sql, params) => (await db.client.query(sql, params)).rows },
    DEFAULT_SCHEMA,
    cap,
  );

/**
 * The dashboard's chart is read at every view of its overview, on the table a busy queue has: it
 * must read only the last hour's finished jobs through jobs_finished_idx, at most `cap` per type
 * and status, never the million older rows.
 */
describe('dashboard throughput chart beside a million finished jobs', () => {
  const db = usePlanTestDatabase('finished');
  const FINISHED_TYPES = 3; // the shape's 'email', 'report', 'other'
  /** The skip scan's descents: at most two index rows per type and the end, however many rows. */
  const DESCENTS = 2 * (FINISHED_TYPES + 1);

  beforeAll(async () => {
    // In the last hour: 30,000 completed reports (one every 100 ms) and 120 failed emails, 2 a
    // minute; before it, the shape's million finished jobs.
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at)
       SELECT 'report', 'completed', 1, now() - g * interval '100 ms'
       FROM generate_series(1, 30000) AS g`,
    );
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at, last_error)
       SELECT 'email', 'failed', 1, now() - interval '10 seconds' - g * interval '30 seconds',
              'boom'
       FROM generate_series(0, 119) AS g`,
    );
    await db.client.query(`VACUUM ANALYZE job_queue.jobs`);
  }, 120_000);

  it('counts per minute what the last hour finished, through jobs_finished_idx only', async () => {
    const chart = await answer(db, 50_000);
    expect(chart.capped).toBe(false);
    expect(chart.completed.reduce((a, b) => a + b, 0)).toBe(30_000);
    expect(chart.failed.reduce((a, b) => a + b, 0)).toBe(120);
    expect(chart.failed.every((count) => count === 2)).toBe(true);
    // 3,000 s of reports: the newest 50 minutes have 600 each, the older ten none.
    expect(chart.completed.slice(10, 59).every((count) => count === 600)).toBe(true);
    expect(chart.completed.slice(0, 9).every((count) => count === 0)).toBe(true);

    const [sql, params] = await statementOf(50_000);
    const plan = await explainAnalyze(db.client, sql, params);
    const reads = [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'jobs');
    expect(reads.length).toBeGreaterThan(0);
    for (const node of reads) {
      expect({ node: node['Node Type'], index: node['Index Name'] }).toEqual({
        node: expect.stringMatching(/^Index (Only )?Scan$/),
        index: 'jobs_finished_idx',
      });
    }
    const { rows, removed } = readThrough(plan, 'jobs_finished_idx');
    // The skip scan's descents and the hour's rows.
    expect(rows).toBeLessThanOrEqual(DESCENTS + 30_000 + 120);
    expect(removed).toBe(0);
  });

  it('reads at most the cap per type and status, and says the chart was capped', async () => {
    const chart = await answer(db, 1_000);
    expect(chart.capped).toBe(true);
    expect(chart.completed.reduce((a, b) => a + b, 0)).toBe(1_000);
    expect(chart.failed.reduce((a, b) => a + b, 0)).toBe(120);

    const [sql, params] = await statementOf(1_000);
    const plan = await explainAnalyze(db.client, sql, params);
    const { rows } = readThrough(plan, 'jobs_finished_idx');
    expect(rows).toBeLessThanOrEqual(DESCENTS + 1_000 + 120);
    expect(blocksOf(plan)).toBeLessThan(500);
  });
});

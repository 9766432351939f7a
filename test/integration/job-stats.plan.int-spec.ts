import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import {
  REFRESH_JOB_STATS,
  refreshJobStats,
} from '../../libs/job-queue/src/sql/refresh-job-stats.query';
import { explainAnalyze, JsonPlanNode, nodesOf } from '../support/json-plan';
import { usePlanTestDatabase } from '../support/plan-template';

const schema = queueSchema(DEFAULT_SCHEMA);
const INTERVAL_MS = 5_000;

// The refresher runs on every worker every statsIntervalMs: a tick that is not due (or finds
// another node counting) must cost nothing however big the table, and the count it makes when
// due must be the one whole-table read, nothing per row more.
describe('job stats refresh: its cost beside a million finished jobs', () => {
  const db = usePlanTestDatabase('finished');
  const rows = {
    query: async (sql: string, params?: unknown[]) => (await db.client.query(sql, params)).rows,
  };

  /** EXPLAIN ANALYZE of the refresh statement, rolled back. */
  const analyzeRefresh = (force: boolean): Promise<JsonPlanNode> =>
    explainAnalyze(db.client, schema.statement(REFRESH_JOB_STATS), [
      schema.lockKey('stats'),
      INTERVAL_MS,
      force,
    ]);

  const jobsScans = (plan: JsonPlanNode) =>
    [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'jobs');

  it('a tick that is not due reads nothing of the table: the scan is gated off', async () => {
    await refreshJobStats(rows, DEFAULT_SCHEMA, INTERVAL_MS, true); // a fresh snapshot
    const plan = await analyzeRefresh(false);
    const scans = jobsScans(plan);
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan['Actual Loops']).toBe(0);
    expect(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']).toBeLessThan(50);
  });

  it('a due count reads each row once and stores the counts', async () => {
    const plan = await analyzeRefresh(true);
    const read = jobsScans(plan).reduce(
      (sum, node) => sum + node['Actual Rows'] * node['Actual Loops'],
      0,
    );
    // Rows per loop are averaged (rounded) over a parallel scan's processes: about, not exactly.
    expect(Math.abs(read - 1_001_000)).toBeLessThanOrEqual(10);
    const counted = await refreshJobStats(rows, DEFAULT_SCHEMA, INTERVAL_MS, true);
    expect(counted!.counts).toEqual({
      email: { completed: 333_333, pending: 500 },
      report: { completed: 333_334, pending: 500 },
      other: { completed: 333_333 },
    });
  });
});

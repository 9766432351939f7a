import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { listJobRows } from '../../libs/job-queue/src/sql/list-jobs.query';
import { checkListJobsQuery } from '../../libs/job-queue/src/validation/list-jobs.checks';
import { ListJobsQuery } from '../../libs/job-queue/src/interfaces/list-jobs.interface';
import { JobStatus } from '../../libs/job-queue/src/entities/job-status.enum';
import { blocksOf, explainAnalyze, JsonPlanNode, nodesOf, readThrough } from '../support/json-plan';
import { PlanTestDatabase, usePlanTestDatabase } from '../support/plan-template';
import { capturedStatement } from '../support/captured-statement';

/** The statement and parameters `listJobs(query)` sends, captured without running it. */
function statementOf(query: ListJobsQuery): Promise<[string, unknown[]]> {
  return capturedStatement((db) => listJobRows(db, DEFAULT_SCHEMA, checkListJobsQuery(query)));
}

/** EXPLAIN ANALYZE (rolled back) of exactly what `listJobs(query)` sends. */
async function explainList(db: PlanTestDatabase, query: ListJobsQuery): Promise<JsonPlanNode> {
  const [sql, params] = await statementOf(query);
  return explainAnalyze(db.client, sql, params);
}

/** The cursor `listJobs` gives after the job `id`. */
const cursorAfter = (id: string | number) =>
  Buffer.from(JSON.stringify({ id: String(id) })).toString('base64url');

/** The reads of `jobs` in the plan: every one an index scan, of these indexes only. */
function expectIndexReadsOnly(plan: JsonPlanNode, indexes: string[]): void {
  const reads = [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'jobs');
  expect(reads.length).toBeGreaterThan(0);
  for (const node of reads) {
    // A bitmap heap scan reads the rows its bitmap index scan (the child) found.
    const scan = node['Node Type'] === 'Bitmap Heap Scan' ? node.Plans![0] : node;
    expect(scan['Node Type']).toMatch(/^(Bitmap Index Scan|Index (Only )?Scan( Backward)?)$/);
    expect(indexes).toContain(scan['Index Name']);
  }
}

const LIMIT = 50;
/** Entries a page's scans may read per (type, status) they look at: a page and one more. */
const PER_HEAD = LIMIT + 1;

/**
 * `listJobs` beside a million finished jobs: the first page and a page half-way down read a
 * page's worth of index entries per type or status they merge, never the rows they skip.
 * Block counts are bounds, far under a read of the table (tens of thousands of blocks): a page's
 * rows are fetched by primary key, a few blocks each.
 */
describe('listJobs plans beside a million finished jobs', () => {
  const db = usePlanTestDatabase('finished');
  /** The shape's types: 'email', 'report', 'other'. */
  const TYPES = 3;
  /** Jobs in flight added to the shape (a quarter claimed, the rest running), of 'report'. */
  const IN_FLIGHT = 400;
  let middle: string;

  beforeAll(async () => {
    const { rows } = await db.client.query<{ id: string }>(
      `SELECT (max(id) / 2)::text AS id FROM job_queue.jobs`,
    );
    middle = rows[0].id;
    // Jobs in flight, as a busy worker holds them: not in jobs_list_idx, all in jobs_lease_idx.
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, worker_id, claimed_at, heartbeat_at)
       SELECT 'report', CASE g % 4 WHEN 0 THEN 'claimed' ELSE 'running' END, 1, 'busy', now(), now()
       FROM generate_series(1, ${IN_FLIGHT}) AS g`,
    );
    await db.client.query(`VACUUM ANALYZE job_queue.jobs`);
  }, 120_000);

  const depths = () =>
    [
      ['first page', {}],
      ['a page half-way down', { cursor: cursorAfter(middle) }],
    ] as Array<[string, ListJobsQuery]>;

  it('unfiltered: the primary key, a page and one more', async () => {
    for (const [, page] of depths()) {
      const plan = await explainList(db, { ...page, limit: LIMIT });
      expectIndexReadsOnly(plan, ['jobs_pkey']);
      expect(readThrough(plan, 'jobs_pkey').rows).toBe(PER_HEAD);
      expect(blocksOf(plan)).toBeLessThan(50);
    }
  });

  it('by type and status: jobs_list_idx, a page and one more, then those rows', async () => {
    for (const [, page] of depths()) {
      // A common pair, one of a few rows, some of none: never a walk of the primary key.
      for (const status of [
        JobStatus.Completed,
        JobStatus.Pending,
        JobStatus.Failed,
        JobStatus.Blocked,
      ]) {
        const plan = await explainList(db, { ...page, type: 'email', status, limit: LIMIT });
        expectIndexReadsOnly(plan, ['jobs_list_idx', 'jobs_pkey']);
        const { rows, removed } = readThrough(plan, 'jobs_list_idx');
        expect(rows).toBeLessThanOrEqual(PER_HEAD);
        expect(removed).toBe(0);
        expect(readThrough(plan, 'jobs_pkey').rows).toBeLessThanOrEqual(PER_HEAD);
        expect(blocksOf(plan)).toBeLessThan(300);
      }
    }
  });

  it('by type: a page and one more of each status in jobs_list_idx, and those in flight', async () => {
    for (const [, page] of depths()) {
      const plan = await explainList(db, { ...page, type: 'report', limit: LIMIT });
      expectIndexReadsOnly(plan, ['jobs_list_idx', 'jobs_lease_idx', 'jobs_pkey']);
      expect(readThrough(plan, 'jobs_list_idx').rows).toBeLessThanOrEqual(
        Object.values(JobStatus).length * PER_HEAD,
      );
      expect(readThrough(plan, 'jobs_lease_idx').rows).toBe(page.cursor ? 0 : IN_FLIGHT);
      expect(readThrough(plan, 'jobs_pkey').rows).toBe(PER_HEAD);
      expect(blocksOf(plan)).toBeLessThan(300);
    }
  });

  it('by status: a descent per type, a page and one more of each, then those rows', async () => {
    for (const [, page] of depths()) {
      for (const status of [JobStatus.Completed, JobStatus.Failed, JobStatus.Blocked]) {
        const plan = await explainList(db, { ...page, status, limit: LIMIT });
        expectIndexReadsOnly(plan, ['jobs_list_idx', 'jobs_pkey']);
        // The skip scan's descents (a row per type, and the end) and each type's page.
        const { rows, removed } = readThrough(plan, 'jobs_list_idx');
        expect(rows).toBeLessThanOrEqual(TYPES + 1 + TYPES * PER_HEAD);
        expect(removed).toBe(0);
        expect(readThrough(plan, 'jobs_pkey').rows).toBeLessThanOrEqual(PER_HEAD);
        expect(blocksOf(plan)).toBeLessThan(300);
      }
    }
  });

  it('in flight (claimed, running), with or without a type: every one from jobs_lease_idx', async () => {
    for (const [, page] of depths()) {
      for (const [status, count] of [
        [JobStatus.Running, (IN_FLIGHT * 3) / 4],
        [JobStatus.Claimed, IN_FLIGHT / 4],
      ] as const) {
        for (const type of [undefined, 'report', 'email']) {
          const plan = await explainList(db, { ...page, status, type, limit: LIMIT });
          expectIndexReadsOnly(plan, ['jobs_lease_idx', 'jobs_pkey']);
          // Below the middle id none is in flight: they were inserted last.
          const below = page.cursor === undefined ? count : 0;
          expect(readThrough(plan, 'jobs_lease_idx').rows).toBe(type === 'email' ? 0 : below);
          expect(readThrough(plan, 'jobs_pkey').rows).toBeLessThanOrEqual(PER_HEAD);
          // A block read per job in flight at most, and the page's: not the table's thousands.
          expect(blocksOf(plan)).toBeLessThan(IN_FLIGHT + 2 * PER_HEAD);
        }
      }
    }
  });

  it('by id: one row of the primary key', async () => {
    const plan = await explainList(db, { id: middle });
    expectIndexReadsOnly(plan, ['jobs_pkey']);
    expect(readThrough(plan, 'jobs_pkey').rows).toBe(1);
    expect(blocksOf(plan)).toBeLessThan(10);
  });
});

/**
 * A unique-key prefix beside a million finished keyed jobs (half of them holding their keys in
 * `jobs_unique_key_idx`) and 1,000 pending ones: a range of `jobs_unique_key_prefix_idx`, which
 * holds the unfinished ones only, whatever the database's collation.
 */
describe('listJobs by unique-key prefix beside a million finished keyed jobs', () => {
  const db = usePlanTestDatabase('keyedFinished');

  it('reads the matching unfinished keys only', async () => {
    for (const [prefix, matching] of [
      ['pending:1', 112], // pending:1, pending:10 … pending:1000
      ['pending:99', 11],
      ['key:1', 0], // 111,112 finished keys start with it
    ] as const) {
      const plan = await explainList(db, { uniqueKeyPrefix: prefix, limit: LIMIT });
      expectIndexReadsOnly(plan, ['jobs_unique_key_prefix_idx']);
      expect(readThrough(plan, 'jobs_unique_key_prefix_idx').rows).toBe(matching);
      expect(plan['Actual Rows']).toBe(Math.min(matching, PER_HEAD));
      expect(blocksOf(plan)).toBeLessThan(50);
    }
  });
});

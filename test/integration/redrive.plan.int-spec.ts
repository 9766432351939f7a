import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { RedriveCriteria, redriveJobs } from '../../libs/job-queue/src/sql/redrive-jobs.query';
import { blocksOf, explainAnalyze, JsonPlanNode, nodesOf, readThrough } from '../support/json-plan';
import { usePlanTestDatabase } from '../support/plan-template';
import { capturedStatement } from '../support/captured-statement';

/** Failed jobs added to the shape: of 'report' and 'email', the newest rows of the table. */
const FAILED_PER_TYPE = 1_000;
/** The batch the plans are taken at. */
const BATCH = 100;
/**
 * Blocks a moved job may touch: its row, its new version and that version's index entries.
 * A read of the million completed rows would be thousands of blocks.
 */
const BLOCKS_PER_MOVED_JOB = 30;

/** The statement and parameters one batch of `redrive(criteria)` sends, captured unrun. */
function statementOf(criteria: RedriveCriteria): Promise<[string, unknown[]]> {
  return capturedStatement(
    (db) => redriveJobs(db, DEFAULT_SCHEMA, '0', criteria, BATCH),
    [{ last_id: null, moved: 0, seen: 0 }],
  );
}

/** Every read of `jobs` is an index scan of these indexes (`jobs_unique_key_idx`: a keyed job's check). */
function expectIndexReadsOnly(plan: JsonPlanNode, indexes: string[]): void {
  const reads = [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'jobs');
  expect(reads.length).toBeGreaterThan(0);
  for (const node of reads) {
    if (node['Node Type'] === 'ModifyTable') continue;
    const scan = node['Node Type'] === 'Bitmap Heap Scan' ? node.Plans![0] : node;
    expect(scan['Node Type']).toMatch(/^(Bitmap Index Scan|Index (Only )?Scan( Backward)?)$/);
    expect(indexes).toContain(scan['Index Name']);
  }
}

/**
 * A batch of `QueueService.redrive` beside a million completed jobs: it reads the failed jobs'
 * entries of `jobs_list_idx` (of the type, or of each type after a descent per type) or the
 * ids' primary-key entries, a batch's worth, never the completed rows. EXPLAIN ANALYZE runs the
 * statement and rolls it back.
 */
describe('redrive plans beside a million completed jobs', () => {
  const db = usePlanTestDatabase('finished');

  beforeAll(async () => {
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at, last_error)
       SELECT CASE g % 2 WHEN 0 THEN 'email' ELSE 'report' END, 'failed', 1, now(), 'boom'
       FROM generate_series(1, ${2 * FAILED_PER_TYPE}) AS g`,
    );
    await db.client.query(`VACUUM ANALYZE job_queue.jobs`);
  }, 120_000);

  const explain = async (criteria: RedriveCriteria) => {
    const [sql, params] = await statementOf(criteria);
    return explainAnalyze(db.client, sql, params);
  };

  it('of a type: its failed entries in jobs_list_idx, a batch of them', async () => {
    const plan = await explain({ type: 'report', since: null, ids: null });
    expectIndexReadsOnly(plan, ['jobs_list_idx', 'jobs_pkey', 'jobs_unique_key_idx']);
    expect(readThrough(plan, 'jobs_list_idx').rows).toBe(BATCH);
    expect(blocksOf(plan)).toBeLessThan(BLOCKS_PER_MOVED_JOB * BATCH);
  });

  it("of a type since a time: the type's failures, by id or by their time", async () => {
    const plan = await explain({
      type: 'report',
      since: new Date(Date.now() - 3_600_000),
      ids: null,
    });
    // Either index serves it: jobs_finished_idx reads the failures since then, and sorts them.
    const indexes = ['jobs_list_idx', 'jobs_finished_idx', 'jobs_pkey', 'jobs_unique_key_idx'];
    expectIndexReadsOnly(plan, indexes);
    const read =
      readThrough(plan, 'jobs_list_idx').rows + readThrough(plan, 'jobs_finished_idx').rows;
    expect(read).toBeLessThanOrEqual(FAILED_PER_TYPE);
    expect(blocksOf(plan)).toBeLessThan(BLOCKS_PER_MOVED_JOB * BATCH + FAILED_PER_TYPE);
  });

  it('of every type: a descent per type, then a batch of each, merged', async () => {
    const plan = await explain({ type: null, since: null, ids: null });
    expectIndexReadsOnly(plan, ['jobs_list_idx', 'jobs_pkey', 'jobs_unique_key_idx']);
    // Three types and the end of the skip scan, then up to a batch of each type with failures.
    expect(readThrough(plan, 'jobs_list_idx').rows).toBeLessThanOrEqual(4 + 3 * BATCH);
    expect(blocksOf(plan)).toBeLessThan(BLOCKS_PER_MOVED_JOB * BATCH);
  });

  it('of ids: their primary-key entries', async () => {
    const { rows } = await db.client.query<{ id: string }>(
      `SELECT id::text FROM job_queue.jobs WHERE status = 'failed' ORDER BY id LIMIT 10`,
    );
    const plan = await explain({ type: null, since: null, ids: rows.map((row) => row.id) });
    expectIndexReadsOnly(plan, ['jobs_pkey', 'jobs_unique_key_idx']);
    expect(blocksOf(plan)).toBeLessThan(BLOCKS_PER_MOVED_JOB * 10 + 100);
  });
});

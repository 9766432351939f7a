import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { findUniqueKeyHolders } from '../../libs/job-queue/src/sql/find-unique-key-holders.query';
import { insertJobs, JobInsertRow } from '../../libs/job-queue/src/sql/insert-jobs.query';
import { Queryable } from '../../libs/job-queue/src/sql/queryable';
import { insertSuccessorJobs } from '../../libs/job-queue/src/sql/insert-successor-jobs.query';
import { replaceDebouncedJobs } from '../../libs/job-queue/src/sql/replace-debounced-jobs.query';
import { blocksOf, explainAnalyze, JsonPlanNode, nodesOf } from '../support/json-plan';
import { usePlanTestDatabase } from '../support/plan-template';

const COMPLETED_STATES = 63; // the unfinished statuses and completed

const row = (uniqueKey: string, extra: Partial<JobInsertRow> = {}): JobInsertRow => ({
  jobType: 'report',
  dataJson: '{"n":1}',
  priority: 100,
  runAt: null,
  delayMs: 0,
  maxAttempts: null,
  uniqueKey,
  uniqueStates: COMPLETED_STATES,
  uniqueWindowMs: null,
  debounceMs: null,
  concurrencyKey: null,
  metaJson: null,
  ...extra,
});

/**
 * The statements of a keyed enqueue, beside a million finished keyed jobs (half of whose keys
 * still count): each finds its key through `jobs_unique_key_idx` and touches a few buffers,
 * however many keys the table holds.
 */
describe('keyed enqueue: plans beside a million finished keyed jobs', () => {
  const db = usePlanTestDatabase('keyedFinished');

  /** The one statement `call` sends, and its parameters (its result is not needed here). */
  async function statementOf(
    call: (queryable: Queryable) => Promise<unknown>,
  ): Promise<[string, unknown[]]> {
    let sent: [string, unknown[]] | undefined;
    const recording: Queryable = {
      query: async (sql, parameters) => {
        sent = [sql, parameters ?? []];
        throw new Error('recorded');
      },
    };
    await call(recording).catch(() => undefined);
    return sent as [string, unknown[]];
  }

  async function planOf(call: (queryable: Queryable) => Promise<unknown>): Promise<JsonPlanNode> {
    const [sql, parameters] = await statementOf(call);
    return explainAnalyze(db.client, sql, parameters);
  }

  /** The nodes that read `jobs` (not the insert or update that writes it). */
  const jobsScans = (plan: JsonPlanNode): JsonPlanNode[] =>
    [...nodesOf(plan)].filter(
      (node) => node['Relation Name'] === 'jobs' && node['Node Type'] !== 'ModifyTable',
    );

  /** What the INSERT's node did: rows inserted, and rows it found holding their keys. */
  const insertOutcome = (plan: JsonPlanNode): { inserted: number; conflicts: number } => {
    const insert = [...nodesOf(plan)].find((node) => node['Node Type'] === 'ModifyTable') as
      (JsonPlanNode & { 'Tuples Inserted': number; 'Conflicting Tuples': number }) | undefined;
    return {
      inserted: insert?.['Tuples Inserted'] ?? -1,
      conflicts: insert?.['Conflicting Tuples'] ?? -1,
    };
  };

  function expectKeyedAccess(
    plan: JsonPlanNode,
    indexes = ['jobs_unique_key_idx'],
    maxBlocks = 60,
  ): void {
    for (const scan of jobsScans(plan)) {
      expect(scan['Node Type']).toMatch(/^Index (Only )?Scan$/);
      expect(indexes).toContain(scan['Index Name']);
    }
    expect(blocksOf(plan)).toBeLessThan(maxBlocks);
  }

  it('an insert whose key a finished job holds does nothing, through the index', async () => {
    const plan = await planOf((q) => insertJobs(q, DEFAULT_SCHEMA, [row('key:500000')]));
    expect(insertOutcome(plan)).toEqual({ inserted: 0, conflicts: 1 });
    expect(jobsScans(plan)).toEqual([]);
    expect(blocksOf(plan)).toBeLessThan(60);
  });

  it('an insert of a new key, with a window folded in, writes one row', async () => {
    const plan = await planOf((q) =>
      insertJobs(q, DEFAULT_SCHEMA, [row('key:new', { uniqueWindowMs: 60_000 })]),
    );
    expect(insertOutcome(plan)).toEqual({ inserted: 1, conflicts: 0 });
    expect(jobsScans(plan)).toEqual([]);
    expect(blocksOf(plan)).toBeLessThan(60);
  });

  it("the holders' look-up reads the index, one probe per key", async () => {
    const plan = await planOf((q) =>
      findUniqueKeyHolders(q, DEFAULT_SCHEMA, [
        { uniqueKey: 'key:500000', uniqueWindowMs: null },
        { uniqueKey: 'pending:7', uniqueWindowMs: null },
        { uniqueKey: 'key:500001', uniqueWindowMs: null }, // finished, its key no longer counts
      ]),
    );
    expect(plan['Actual Rows']).toBe(2);
    expect(jobsScans(plan).length).toBeGreaterThan(0);
    expectKeyedAccess(plan);
  });

  it("a debounce's replace reads the index and writes only a holder not started", async () => {
    const plan = await planOf((q) =>
      replaceDebouncedJobs(q, DEFAULT_SCHEMA, [
        { ...row('pending:8'), debounceMs: 1_000 } as Parameters<typeof replaceDebouncedJobs>[2][0],
        { ...row('key:500000'), debounceMs: 1_000 } as Parameters<
          typeof replaceDebouncedJobs
        >[2][0],
      ]),
    );
    expect(plan['Actual Rows']).toBe(1);
    // Each key's successor, then its holder, by the key; then the row to update by id.
    expectKeyedAccess(plan, ['jobs_successor_key_idx', 'jobs_unique_key_idx', 'jobs_pkey']);
  });

  it("a debounce's successor locks its holder by id and inserts one row", async () => {
    const [holder] = await db.client
      .query<{ id: string; unique_key: string }>(
        `UPDATE job_queue.jobs SET status = 'running' WHERE unique_key = 'pending:9'
         RETURNING id::text AS id, unique_key`,
      )
      .then((result) => result.rows);
    const plan = await planOf((q) =>
      insertSuccessorJobs(q, DEFAULT_SCHEMA, [
        {
          row: { ...row('pending:9'), uniqueStates: null, debounceMs: 0 },
          holderId: holder.id,
          holderKey: holder.unique_key,
        },
      ]),
    );
    expect(plan['Actual Rows']).toBe(1);
    // Three rows written (the holder's new version, the successor, its edge), each into every
    // index of its table: more blocks than a look-up reads.
    expectKeyedAccess(plan, ['jobs_pkey'], 120);
  });
});

import { Client } from 'pg';
import {
  CURRENT_CLAIM_FROM_HEADS_QUERY,
  CURRENT_CLAIM_JOB_BATCH_QUERY,
} from '../../libs/job-queue/src/sql/functions/current-functions';
import { createTestDatabase, TestDatabase } from '../support/database';
import { blocksOf, explainAnalyze, functionSettings, readThrough } from '../support/json-plan';
import { createPlanTestDatabase } from '../support/plan-template';
import {
  claim,
  CLAIM_PARAMETER_TYPES,
  claimStatementCalls,
  connect,
} from './claim-job-batch.support';

const FINISHED = 1_000_000;
const PENDING = 1_000;
const TYPES = ['email', 'report'];

/** 2,000 more pending jobs of the claimed types, for the last test. */
const INSERT_PENDING = `
  INSERT INTO job_queue.jobs (job_type, priority, created_at)
  SELECT CASE g % 2 WHEN 0 THEN 'email' ELSE 'report' END, 50 + g % 100, now() - g * interval '1 ms'
  FROM generate_series(1, $1::int) AS g`;

interface PlanNode {
  /** The node line without its costs, e.g. `Index Scan using jobs_claim_idx on jobs`. */
  name: string;
  /** A `CTE x` / `InitPlan n` / `SubPlan n` line: not a node, it heads a sub-plan of its parent. */
  isSubPlanLabel: boolean;
  details: string[];
  children: PlanNode[];
  column: number;
}

const SUBPLAN_LABEL = /^(CTE \S+|InitPlan \d+.*|SubPlan \d+.*)$/;

/** Builds the node tree of an `EXPLAIN (FORMAT TEXT)` plan from its indentation. */
function parsePlan(text: string): PlanNode {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const clean = (name: string) => name.replace(/\s+\(cost=.*$/, '').trim();
  const root: PlanNode = {
    name: clean(lines[0]),
    isSubPlanLabel: false,
    details: [],
    children: [],
    column: lines[0].length - lines[0].trimStart().length,
  };
  const stack: PlanNode[] = [root];
  let last = root;
  const attach = (column: number, node: PlanNode) => {
    while (stack.length > 1 && stack[stack.length - 1].column >= column) stack.pop();
    stack[stack.length - 1].children.push(node);
    stack.push(node);
  };
  for (const line of lines.slice(1)) {
    const column = line.length - line.trimStart().length;
    const arrow = /^(\s*)->\s+(.*)$/.exec(line);
    if (arrow) {
      last = { name: clean(arrow[2]), isSubPlanLabel: false, details: [], children: [], column };
      attach(column, last);
      last.column = line.indexOf(arrow[2]);
    } else if (SUBPLAN_LABEL.test(line.trim())) {
      attach(column, {
        name: line.trim(),
        isSubPlanLabel: true,
        details: [],
        children: [],
        column,
      });
    } else {
      last.details.push(line.trim());
    }
  }
  return root;
}

function* walk(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.children) yield* walk(child);
}

const readsJobs = (node: PlanNode) => / on jobs( |$)/.test(node.name);

/**
 * Whether a node's own input (leaving out the sub-plans, CTEs, hung on it) reads `jobs` other than
 * through a `Limit`: a Limit over a type's head bounds what it reads, however big the table.
 */
function readsJobsUnbounded(node: PlanNode): boolean {
  return node.children.some(
    (child) =>
      !child.isSubPlanLabel &&
      !/^Limit\b/.test(child.name) &&
      (readsJobs(child) || readsJobsUnbounded(child)),
  );
}

/**
 * The claim must walk the partial index in order, never scan or sort the table: the only sorts
 * allowed merge the few rows of each type's head (read under a `Limit`) or the claimed rows.
 */
function expectIndexOrderedClaim(planText: string): void {
  const nodes = [...walk(parsePlan(planText))];
  const names = nodes.map((node) => node.name);

  expect(names).toContainEqual(expect.stringMatching(/^Index Scan using jobs_claim_idx on jobs\b/));
  // The update finds the claimed rows by primary key, not by hashing the table.
  expect(names).toContainEqual(expect.stringMatching(/^Index Scan using jobs_pkey on jobs\b/));
  expect(names.filter((name) => /Seq Scan on jobs\b/.test(name))).toEqual([]);
  expect(names.filter((name) => /^(Hash|Merge) Join\b/.test(name))).toEqual([]);
  expect(names.filter((name) => /Bitmap Heap Scan on jobs\b/.test(name))).toEqual([]);
  const sortsOverJobs = nodes
    .filter((node) => /\bSort$/.test(node.name))
    .filter(readsJobsUnbounded)
    .map((sort) => `${sort.name} (${sort.details.join('; ')})`);
  expect(sortsOverJobs).toEqual([]);
  // Every scan of the claim index reads one type's head, by equality on job_type.
  const claimScans = nodes.filter((node) => /^Index Scan using jobs_claim_idx/.test(node.name));
  for (const scan of claimScans) {
    expect(scan.details.join(' ')).toMatch(/Index Cond: \(\(?job_type = /);
  }
}

describe('claim_job_batch: plan with a million finished jobs', () => {
  let big: TestDatabase;
  let fresh: TestDatabase;
  let client: Client;
  let freshClient: Client;

  const explain = async (sql: string): Promise<string> => {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(sql);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  };

  beforeAll(async () => {
    // The million finished jobs and 1,000 pending ones, analysed: a clone of a prepared template.
    [big, fresh] = await Promise.all([createPlanTestDatabase('finished'), createTestDatabase()]);
    [client, freshClient] = await Promise.all([connect(big.url), connect(fresh.url)]);
    await client.query(
      `PREPARE claim_plan(${CLAIM_PARAMETER_TYPES}) AS ${CURRENT_CLAIM_JOB_BATCH_QUERY}`,
    );
    // The statement a call without cursors runs (a claim from the heads): V2's ten parameters.
    await client.query(
      `PREPARE heads_plan(${CLAIM_PARAMETER_TYPES.split(',').slice(0, 10).join(',')})
       AS ${CURRENT_CLAIM_FROM_HEADS_QUERY}`,
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all([client?.end(), freshClient?.end()]);
    await Promise.all([big?.drop(), fresh?.drop()]);
  });

  it('holds the rows the test is about', async () => {
    const { rows } = await client.query(
      `SELECT status, count(*)::int AS count FROM job_queue.jobs GROUP BY status ORDER BY status`,
    );
    expect(rows).toEqual([
      { status: 'completed', count: FINISHED },
      { status: 'pending', count: PENDING },
    ]);
  });

  it('generic plan (what a cached plpgsql plan would be): an index scan on jobs_claim_idx, no seq scan, no sort of the table', async () => {
    await client.query(`SET plan_cache_mode = force_generic_plan`);
    try {
      for (const execute of [
        `claim_plan('w', ARRAY['email', 'report'], 10, NULL, false, NULL, NULL, NULL, NULL, NULL,
                    ARRAY['email'], ARRAY[100], ARRAY[now()], ARRAY[1])`,
        `heads_plan('w', ARRAY['email', 'report'], 10, NULL, false, NULL, NULL, NULL, NULL, NULL)`,
      ]) {
        const plan = await explain(`EXPLAIN (FORMAT TEXT) EXECUTE ${execute}`);
        // Parameters left as $n: it really is the generic plan.
        expect(plan).toContain('COALESCE($4, now())');
        expectIndexOrderedClaim(plan);
      }
    } finally {
      await client.query(`RESET plan_cache_mode`);
    }
  });

  it('custom plans, with and without p_now: the same shape', async () => {
    await client.query(`SET plan_cache_mode = force_custom_plan`);
    try {
      // The ten arguments of both statements, then the cursors (NULL: the function runs V2).
      const cursors = `ARRAY['email', 'email', 'report'], ARRAY[100, 50, 100],
                       ARRAY[now(), now(), now()], ARRAY[1, 2, 3]`;
      for (const args of [
        `'w', ARRAY['email', 'report'], 10, NULL, false, NULL, NULL, NULL, NULL, NULL`,
        `'w', ARRAY['email'], 1, now(), true, ARRAY[1], ARRAY[3], ARRAY[1000], ARRAY[60000],
         ARRAY[0.2]`,
        `'w', ARRAY['email', 'report', 'other'], 500, '2031-01-01T00:00:00Z', false,
         ARRAY[NULL, 2, 0], NULL, NULL, NULL, NULL`,
      ]) {
        for (const execute of [
          `claim_plan(${args}, ${cursors})`,
          `claim_plan(${args}, NULL, NULL, NULL, NULL)`,
          `heads_plan(${args})`,
        ]) {
          const plan = await explain(`EXPLAIN (FORMAT TEXT) EXECUTE ${execute}`);
          expect(plan).not.toContain('COALESCE($4');
          expectIndexOrderedClaim(plan);
        }
      }
    } finally {
      await client.query(`RESET plan_cache_mode`);
    }
  });

  /**
   * The plans the statement inside claim_job_batch runs (auto_explain) for `calls` claims of
   * `jobTypes`, `batchSize` each: past the plan cache's five custom plans, then two with the
   * generic plan forced. Rolled back.
   */
  async function plansInside(
    target: Client,
    jobTypes: string[],
    batchSize: number,
    calls = 8,
  ): Promise<string[]> {
    const plans: string[] = [];
    const onNotice = (notice: { message?: string }) => {
      const message = notice.message ?? '';
      if (!message.includes('FOR UPDATE SKIP LOCKED')) return; // the outer SELECT's plan
      const lines = message.split('\n');
      plans.push(lines.slice(lines.findIndex((line) => /\(cost=\d/.test(line))).join('\n'));
    };
    target.on('notice', onNotice);
    await target.query(`LOAD 'auto_explain'`);
    await target.query(`SET auto_explain.log_min_duration = 0`);
    await target.query(`SET auto_explain.log_nested_statements = on`);
    await target.query(`SET auto_explain.log_level = 'notice'`);
    await target.query(`SET auto_explain.log_format = 'text'`);
    await target.query('BEGIN');
    try {
      for (let i = 0; i < calls; i++) await claim(target, 'w', jobTypes, batchSize);
      await target.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      for (let i = 0; i < 2; i++) await claim(target, 'w', jobTypes, batchSize);
    } finally {
      await target.query('ROLLBACK');
      await target.query(`SET auto_explain.log_min_duration = -1`);
      target.off('notice', onNotice);
    }
    return plans;
  }

  it('the statement inside claim_job_batch runs that plan, call after call (auto_explain)', async () => {
    const plans = await plansInside(client, TYPES, 10);
    expect(plans).toHaveLength(10);
    plans.forEach(expectIndexOrderedClaim);
    expect(plans[9]).toContain('COALESCE($4, now())');
  });

  it('keeps that plan with nothing but one type’s analyzed backlog (a worker’s queue)', async () => {
    // The update once hashed the whole table: with only pending rows, a seq scan looked cheap.
    await freshClient.query(
      `INSERT INTO job_queue.jobs (job_type) SELECT 'backlog' FROM generate_series(1, 50000)`,
    );
    await freshClient.query(`ANALYZE job_queue.jobs`);
    try {
      const plans = await plansInside(freshClient, ['backlog'], 50);
      expect(plans).toHaveLength(10);
      plans.forEach(expectIndexOrderedClaim);
    } finally {
      await freshClient.query(`DELETE FROM job_queue.jobs`);
      await freshClient.query(`ANALYZE job_queue.jobs`);
    }
  });

  it('reads the pages it reads with no history, with a million finished jobs (blocks, not time)', async () => {
    // The same pending jobs in both tables, same types and priorities; timings are the bench's.
    await client.query(INSERT_PENDING, [2_000]);
    await freshClient.query(INSERT_PENDING, [PENDING + 2_000]);
    // VACUUM too, not only ANALYZE: where the claim's new row versions go (the free space map,
    // the visibility map) then does not depend on whether autovacuum has reached either table
    // yet, which under load it may or may not have (CI once read 7 blocks more than the bound).
    await Promise.all([
      client.query(`VACUUM ANALYZE job_queue.jobs`),
      freshClient.query(`VACUUM ANALYZE job_queue.jobs`),
    ]);
    for (const { label, sql, params } of claimStatementCalls(TYPES, 10, null, 50)) {
      const claimPlan = async (target: Client) =>
        explainAnalyze(
          target,
          sql,
          params,
          // Planned as the function plans it: with its SET clauses.
          await functionSettings(target, 'job_queue.claim_job_batch'),
        );
      const withHistory = await claimPlan(client);
      const withoutHistory = await claimPlan(freshClient);
      for (const plan of [withHistory, withoutHistory]) {
        expect({ label, rows: plan['Actual Rows'] }).toEqual({ label, rows: 10 });
        expect(readThrough(plan, 'jobs_claim_idx').removed).toBe(0);
      }
      // The finished rows are not in the claim's partial index: the claim reads the same pages
      // but, for each of the 10 claimed rows, the primary key's deeper descent (a few levels
      // more) and its writes (the new version's heap page and index entries), whose pages vary
      // from run to run with where the versions go. A scan of the million would be thousands of
      // blocks. Here the two differ by 13 (from the heads) and 21 (after cursors) blocks, 10 of
      // them the primary key's descent; one CI run read 46 more (209 against 163), the empty
      // table's writes being the side that moved.
      const PKEY_LEVELS_MORE = 3;
      const WRITES_THAT_VARY = 3;
      expect(blocksOf(withHistory)).toBeLessThanOrEqual(
        blocksOf(withoutHistory) + (PKEY_LEVELS_MORE + WRITES_THAT_VARY) * 10,
      );
    }
  });
});

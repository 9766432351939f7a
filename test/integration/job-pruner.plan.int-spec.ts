import { Client } from 'pg';
import { currentPruneJobsQuery } from '../../libs/job-queue/src/sql/functions/current-functions';
import { PRUNE_JOBS_V3_ARGUMENTS } from '../../libs/job-queue/src/sql/functions/prune-jobs.v3';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { createTestDatabase, TestDatabase } from '../support/database';
import { functionSettings } from '../support/json-plan';

const FINISHED = 1_000_000;
const UNFINISHED = 1_000;

// A million finished jobs of three types over the last 30 days, all three statuses; a thousand
// unfinished ones. One type has a stored retention, the others take the defaults below.
const INSERT_FINISHED = `
  INSERT INTO job_queue.jobs (job_type, status, created_at, run_at, completed_at, attempts)
  SELECT CASE g % 3 WHEN 0 THEN 'email' WHEN 1 THEN 'report' ELSE 'image' END,
         CASE WHEN g % 10 = 0 THEN 'failed' WHEN g % 10 = 1 THEN 'cancelled' ELSE 'completed' END,
         now() - interval '30 days' + g * interval '2 seconds',
         now() - interval '30 days' + g * interval '2 seconds',
         now() - interval '30 days' + g * interval '2 seconds',
         1
  FROM generate_series(1, $1::int) AS g`;
const INSERT_UNFINISHED = `
  INSERT INTO job_queue.jobs (job_type, status)
  SELECT 'email', CASE g % 2 WHEN 0 THEN 'pending' ELSE 'running' END
  FROM generate_series(1, $1::int) AS g`;
// Each unfinished job depends on ten finished ones, spread over the million (every 100th job):
// the prune reads them and keeps them.
const DEPEND_ON_FINISHED = `
  WITH waiting AS (
    SELECT id, row_number() OVER (ORDER BY id) AS n FROM job_queue.jobs
    WHERE status NOT IN ('completed', 'failed', 'cancelled')
  ), edges AS (
    INSERT INTO job_queue.job_dependencies (job_id, dependency_id)
    SELECT waiting.id, (waiting.n - 1) * 1000 + k * 100 FROM waiting, generate_series(1, 10) AS k
    RETURNING dependency_id
  )
  UPDATE job_queue.jobs SET has_dependants = true WHERE id IN (SELECT dependency_id FROM edges)`;

const DAY_MS = 86_400_000;
/**
 * The most rows a page of 1,000 reads from the index: the sort by id within a `completed_at`
 * (an incremental sort) takes rows in groups of 32, and reads to the end of the last one.
 */
const PAGE_READ_MAX = 1_000 + 32;
/** The pruner's parameters: lock key, defaults 1 / 7 / 7 days, no override, batch 1000. */
const PRUNER_ARGS = [
  queueSchema(DEFAULT_SCHEMA).lockKey('prune'),
  DAY_MS,
  7 * DAY_MS,
  7 * DAY_MS,
  null,
  null,
  null,
  1_000,
  null, // p_now: the database's now(), as in production
  null, // no cursor: the pass's first page
  null,
  null,
  null,
];

/** Node lines of a text plan, costs cut off (`Index Scan using jobs_finished_idx on jobs j`). */
const nodes = (plan: string): string[] =>
  plan
    .split('\n')
    .map((line) => line.replace(/^\s*(->\s+)?/, '').replace(/\s+\(cost=.*$/, ''))
    .filter((line) => /^[A-Z]/.test(line) && !/^(CTE|InitPlan|SubPlan)\b/.test(line));

/**
 * Finds old rows through jobs_finished_idx, and their dependants through job_dependencies'
 * primary key; never scans, hashes or sorts either table (only the few rules, a row per type and
 * status, each rule's rows that share a `completed_at`, by id, and the page read are sorted).
 */
function expectIndexedPrune(plan: string): void {
  const names = nodes(plan);
  expect(names).toContainEqual(
    expect.stringMatching(/^Index (Only )?Scan using job_dependencies_pkey on job_dependencies\b/),
  );
  expect(names.filter((name) => /Seq Scan on job_dependencies\b/.test(name))).toEqual([]);
  // Sorted: the rules (a row per type and status), and the page itself (at most a batch), for
  // the cursor: its last row.
  const sortKeys = names.filter((name, i) => /^Sort Key:/.test(name) && names[i - 1] === 'Sort');
  expect(sortKeys.filter((key) => !/^Sort Key: (types_\d+\.job_type, |page\.)/.test(key))).toEqual(
    [],
  );
  expect(names).toContainEqual(
    expect.stringMatching(/^Index (Only )?Scan using jobs_finished_idx on jobs\b/),
  );
  expect(names.filter((name) => /Seq Scan on jobs\b/.test(name))).toEqual([]);
  expect(names.filter((name) => /Bitmap Heap Scan on jobs\b/.test(name))).toEqual([]);
  expect(names.filter((name) => /^(Hash|Merge) Join\b/.test(name))).toEqual([]);
}

describe('pruning: plan and cost with a million finished jobs', () => {
  let db: TestDatabase;
  let client: Client;

  const explain = async (sql: string): Promise<string> => {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(sql);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  };
  /** EXPLAIN takes no bind parameters: the arguments as literals (the PREPARE typed them). */
  const literal = (value: unknown): string =>
    value === null
      ? 'NULL'
      : Array.isArray(value)
        ? `ARRAY[${value.map(literal).join(', ')}]`
        : typeof value === 'number'
          ? String(value)
          : client.escapeLiteral(String(value));
  const execute = (args: unknown[]) => `EXECUTE prune_plan(${args.map(literal).join(', ')})`;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(INSERT_FINISHED, [FINISHED]);
    await client.query(INSERT_UNFINISHED, [UNFINISHED]);
    await client.query(DEPEND_ON_FINISHED);
    await client.query(
      `INSERT INTO job_queue.job_types (job_type, completed_retention_ms, failed_retention_ms,
                                        cancelled_retention_ms, retention_updated_at)
       VALUES ('report', 3600000, NULL, 0, now())`,
    );
    await client.query(`VACUUM ANALYZE job_queue.jobs, job_queue.job_dependencies`);
    // As prune_jobs() runs it: with the settings the migrations gave the function (JIT off,
    // pg_catalog first, nested loops only), read from the installed function itself.
    const settings = await functionSettings(
      client,
      `job_queue.prune_jobs(${PRUNE_JOBS_V3_ARGUMENTS})`,
    );
    expect(Object.keys(settings)).toEqual(expect.arrayContaining(['jit', 'enable_hashjoin']));
    for (const [name, value] of Object.entries(settings)) {
      await client.query(`SELECT pg_catalog.set_config($1, $2, false)`, [name, value]);
    }
    await client.query(
      `PREPARE prune_plan AS ${currentPruneJobsQuery(queueSchema(DEFAULT_SCHEMA))}`,
    );
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('generic and custom plans read old rows through jobs_finished_idx, nothing else', async () => {
    for (const mode of ['force_generic_plan', 'force_custom_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      try {
        // The pruner's first page and a later one (after a cursor), and an operator's
        // prune({ olderThanMs, statuses, types }).
        const cursor = ['image', 'completed', (Date.now() - 20 * DAY_MS) * 1000, 5];
        for (const args of [
          PRUNER_ARGS,
          [...PRUNER_ARGS.slice(0, 9), ...cursor],
          [null, DAY_MS, DAY_MS, DAY_MS, 0, ['failed'], ['email', 'image'], 1_000, null],
        ].map((a) => [...a, null, null, null, null].slice(0, 13))) {
          const plan = await explain(`EXPLAIN (FORMAT TEXT) ${execute(args)}`);
          expectIndexedPrune(plan);
        }
      } finally {
        await client.query(`RESET plan_cache_mode`);
      }
    }
  });

  it('deletes a batch reading about a batch of rows (EXPLAIN ANALYZE, rolled back)', async () => {
    await client.query('BEGIN');
    try {
      const plan = await explain(`EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) ${execute(PRUNER_ARGS)}`);
      expectIndexedPrune(plan);
      const deleted = /Delete on jobs .*actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(plan);
      expect(Number(deleted?.[1])).toBe(1_000);
      // Every index scan returned about a batch of rows: no pass over the million.
      const scanned = [
        ...plan.matchAll(/Scan using jobs_finished_idx.*actual .*rows=(\d+) loops/g),
      ];
      expect(scanned.length).toBeGreaterThan(0);
      for (const [, rows] of scanned) expect(Number(rows)).toBeLessThanOrEqual(PAGE_READ_MAX);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('reads a page past the rows it keeps, deleting the others (EXPLAIN ANALYZE, rolled back)', async () => {
    // From the first failed email on: every tenth of those rows has an unfinished dependant.
    const cursor = ['email', 'failed', 0, 0];
    const {
      rows: [{ kept }],
    } = await client.query<{ kept: number }>(
      `SELECT count(*) FILTER (WHERE has_dependants)::int AS kept FROM (
         SELECT has_dependants FROM job_queue.jobs
         WHERE job_type = 'email' AND status = 'failed' AND completed_at < now() - interval '7 days'
         ORDER BY completed_at, id LIMIT 1000) AS page`,
    );
    expect(kept).toBeGreaterThan(50);
    await client.query('BEGIN');
    try {
      const args = [...PRUNER_ARGS.slice(0, 9), ...cursor];
      const plan = await explain(`EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) ${execute(args)}`);
      expectIndexedPrune(plan);
      const deleted = /Delete on jobs .*actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(plan);
      expect(Number(deleted?.[1])).toBe(1_000 - kept);
      const scanned = [
        ...plan.matchAll(/Scan using jobs_finished_idx.*actual .*rows=(\d+) loops/g),
      ];
      for (const [, rows] of scanned) expect(Number(rows)).toBeLessThanOrEqual(PAGE_READ_MAX);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});

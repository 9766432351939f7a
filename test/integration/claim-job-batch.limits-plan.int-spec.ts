import { Client } from 'pg';
import { CURRENT_LIMITED_CLAIM_QUERY } from '../../libs/job-queue/src/sql/functions/current-functions';
import {
  blocksOf,
  explainAnalyze,
  explainText,
  functionSettings,
  JsonPlanNode,
  nodesOf,
} from '../support/json-plan';
import { createPlanTestDatabase } from '../support/plan-template';
import { createTestDatabase, TestDatabase } from '../support/database';
import { CLAIM_PARAMETER_TYPES, connect } from './claim-job-batch.support';

/** Keys of the pending `email` jobs, each with a job running. */
const KEYS = 100;
/** The burst behind the `flood` type's one key, at its limit. */
const FLOOD = 30_000;
/** Pending jobs of a key at its limit, at the head of the queue: set aside by the claim. */
const FULL_KEY_PENDING = 50;
/** The indexes the limited claim reads `jobs` through. */
const ALLOWED_INDEXES = /^(jobs_claim_idx|jobs_key_slots_idx|jobs_lease_idx|jobs_pkey)$/;
/** A key whose backlog was set aside: at its limit, its jobs wait. */
const BUSY_BACKLOG = 100_000;

/**
 * The claim of a limited type (`claimJobBatchQueryV4`) on a million finished jobs, 1,000 pending
 * ones spread over 100 keys that each run one job, a key whose backlog of 100,000 waits, and a
 * key at its limit whose pending jobs lead the queue (set aside by the claim): it
 * reads each type's head and each key's slots by index, scans no table, and touches a bounded
 * number of buffers, as the plain claim does.
 */
describe('claim_job_batch with concurrency limits: plan with a million finished jobs', () => {
  let db: TestDatabase;
  let client: Client;
  let settings: Record<string, string>;

  beforeAll(async () => {
    db = await createPlanTestDatabase('finished');
    client = await connect(db.url);
    await client.query(
      `UPDATE job_queue.jobs SET concurrency_key = 'k' || (id % $1::int)
       WHERE status = 'pending' AND job_type = 'email'`,
      [KEYS],
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, concurrency_key, worker_id, attempts,
                                   run_token, claimed_at, heartbeat_at)
       SELECT 'email', 'running', 'k' || g, 'w', 1, 1, now(), now()
       FROM generate_series(0, $1::int - 1) AS g`,
      [KEYS],
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, concurrency_key, priority)
       SELECT 'email', 'waiting', 'busy', 900 FROM generate_series(1, $1::int)`,
      [BUSY_BACKLOG],
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, concurrency_key, worker_id, attempts,
                                   run_token, claimed_at, heartbeat_at)
       VALUES ('email', 'running', 'busy', 'w', 1, 1, now(), now())`,
    );
    // A key at its limit whose pending jobs lead the queue: the claim sets them aside.
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, concurrency_key, worker_id, attempts,
                                   run_token, claimed_at, heartbeat_at)
       SELECT 'email', 'running', 'full', 'w', 1, 1, now(), now() FROM generate_series(1, 2)`,
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, priority)
       SELECT 'email', 'full', 950 FROM generate_series(1, $1::int)`,
      [FULL_KEY_PENDING],
    );
    await client.query(
      `INSERT INTO job_queue.job_types (job_type, concurrency_per_key, global_concurrency)
       VALUES ('email', 2, 500), ('report', NULL, 300)`,
    );
    await client.query('VACUUM ANALYZE job_queue.jobs');
    settings = await functionSettings(client, 'job_queue.claim_job_batch');
    await client.query(
      `PREPARE limited_claim(${CLAIM_PARAMETER_TYPES}) AS ${CURRENT_LIMITED_CLAIM_QUERY}`,
    );
  }, 300_000);

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  /**
   * The generic plan, as the function runs it (`plan_cache_mode = force_generic_plan`): the
   * statement prepared with its fourteen parameters' types, then EXECUTEd without cursors.
   */
  const plan = (jobTypes: string[], batchSize: number): Promise<JsonPlanNode> =>
    explainAnalyze(
      client,
      `EXECUTE limited_claim('w', ARRAY[${jobTypes.map((t) => `'${t}'`).join(', ')}]::text[],
         ${batchSize}, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
      [],
      settings,
    );

  const scansOf = (root: JsonPlanNode) =>
    [...nodesOf(root)].filter((node) => node['Relation Name'] === 'jobs');

  it.each([
    ['a per-key type', ['email']],
    ['a per-key type and a globally limited one', ['email', 'report']],
  ])('%s: index scans only, a bounded read', async (_label, jobTypes) => {
    const root = await plan(jobTypes, 10);
    const scans = scansOf(root);
    expect(scans.filter((node) => /Seq Scan|Bitmap/.test(node['Node Type']))).toEqual([]);
    // Each type's head, each key's slots, the type's running jobs (jobs_lease_idx holds only
    // claimed and running ones), and rows by id.
    const indexes = new Set(scans.map((node) => node['Index Name'] ?? node['Node Type']));
    indexes.delete('ModifyTable');
    expect(indexes).toContain('jobs_claim_idx');
    expect([...indexes].filter((name) => !ALLOWED_INDEXES.test(name))).toEqual([]);
    // The key at its limit had its pending jobs set aside (the plan of that path is checked too).
    const setAside = [...nodesOf(root)].find(
      (node) => node['Node Type'] === 'ModifyTable' && node['Actual Rows'] === FULL_KEY_PENDING,
    );
    expect(setAside).toBeDefined();
    // The 100,000 waiting jobs and the million finished ones are never read.
    expect(blocksOf(root)).toBeLessThan(1_000);
  });
});

/**
 * A table that is mostly one key's burst, at its limit, as planner statistics see it (no million
 * finished rows to make a scan look dear): the plan of setting the burst aside still reads
 * `jobs_key_slots_idx`, in its order. Without that order the planner scanned the table.
 */
describe('claim_job_batch with concurrency limits: plan of setting a burst aside', () => {
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = await connect(db.url);
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, concurrency_key, worker_id, attempts,
                                   run_token, claimed_at, heartbeat_at)
       VALUES ('flood', 'running', 'one', 'w', 1, 1, now(), now())`,
    );
    for (let key = 0; key < 5; key++) {
      await client.query(
        `INSERT INTO job_queue.jobs (job_type, concurrency_key)
         SELECT 'flood', $2 FROM generate_series(1, $1::int)`,
        [FLOOD / 5, key === 0 ? 'one' : `other-${key}`],
      );
    }
    await client.query(
      `INSERT INTO job_queue.job_types (job_type, concurrency_per_key) VALUES ('flood', 1)`,
    );
    await client.query('VACUUM ANALYZE job_queue.jobs');
    await client.query(
      `PREPARE limited_claim(${CLAIM_PARAMETER_TYPES}) AS ${CURRENT_LIMITED_CLAIM_QUERY}`,
    );
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('sets the burst aside by index, not by a scan of the table', async () => {
    const settings = await functionSettings(client, 'job_queue.claim_job_batch');
    // The generic plan under the function's settings, not run: it would set the burst aside.
    const plan = await explainText(
      client,
      `EXECUTE limited_claim('w', ARRAY['flood']::text[], 10, NULL, false,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
      settings,
    );
    expect(plan).not.toMatch(/Seq Scan on jobs/);
    expect(plan).toMatch(/Index Scan using jobs_key_slots_idx on jobs j/);
  });
});

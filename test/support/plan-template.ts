import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  SERVER_URL_ENV,
  TEMPLATE_DB_ENV,
  TestDatabase,
  withAdminClient,
  withDatabase,
} from './database';

/**
 * Million-row tables for the plan tests (EXPLAIN on a big table), built once per server and
 * reused: filling a million rows and analysing them is most of such a test's time, and CI runs
 * the suite twice. Each shape is a template database on the test server, named
 * `jq_plan_<shape>_<hash>`, the hash covering the migration sources (with the function bodies
 * of `sql/functions/`), the shape's fill and this file's format: a change to any of them builds
 * a new template, never reuses a stale one. A test file clones its shape with `CREATE DATABASE
 * … TEMPLATE` and gets a database of its own (rows and planner statistics included), which it
 * may change and drops in `afterAll`.
 *
 * Fills use no time that could go stale while a template waits for its next run: jobs due later
 * are due in ten years.
 */
export const PLAN_SHAPES = {
  /** A million finished jobs of the claimed types and another, then 1,000 pending ones. */
  finished: [
    `INSERT INTO job_queue.jobs (job_type, priority, status, created_at, run_at, completed_at,
                                 attempts)
     SELECT CASE g % 3 WHEN 0 THEN 'email' WHEN 1 THEN 'report' ELSE 'other' END,
            g % 300,
            'completed',
            now() - interval '30 days' + g * interval '1 second',
            now() - interval '30 days' + g * interval '1 second',
            now() - interval '30 days' + g * interval '1 second',
            1
     FROM generate_series(1, 1000000) AS g`,
    `INSERT INTO job_queue.jobs (job_type, priority, created_at)
     SELECT CASE g % 2 WHEN 0 THEN 'email' ELSE 'report' END, 50 + g % 100,
            now() - g * interval '1 ms'
     FROM generate_series(1, 1000) AS g`,
  ],
  /** A million `scheduled` jobs of the claimed type due in ten years, then 10 ready ones. */
  scheduled: [
    `INSERT INTO job_queue.jobs (job_type, priority, status, created_at, run_at)
     SELECT 'email', 900, 'scheduled', now() - interval '1 day' + g * interval '1 ms',
            now() + interval '10 years' + g * interval '1 ms'
     FROM generate_series(1, 1000000) AS g`,
    `INSERT INTO job_queue.jobs (job_type, priority, created_at)
     SELECT 'email', 100, now() - g * interval '1 ms' FROM generate_series(1, 10) AS g`,
  ],
  /** A million ready jobs of a type the claim does not ask for (and better priority), then 10. */
  otherType: [
    `INSERT INTO job_queue.jobs (job_type, priority, created_at)
     SELECT 'other', 900, now() - interval '1 day' + g * interval '1 ms'
     FROM generate_series(1, 1000000) AS g`,
    `INSERT INTO job_queue.jobs (job_type, priority, created_at)
     SELECT 'email', 100, now() - g * interval '1 ms' FROM generate_series(1, 10) AS g`,
  ],
  /**
   * A million completed jobs with unique keys (`key:1` …): every other one's key counts in
   * `completed` (it was enqueued with `uniqueStates` naming it), so half of them hold their keys
   * in `jobs_unique_key_idx`; then 1,000 pending keyed ones (`pending:1` …).
   */
  keyedFinished: [
    `INSERT INTO job_queue.jobs (job_type, status, created_at, run_at, completed_at, attempts,
                                 unique_key, unique_states)
     SELECT 'report', 'completed', now() - interval '1 day', now() - interval '1 day',
            now() - interval '1 day', 1, 'key:' || g, CASE WHEN g % 2 = 0 THEN 63 END
     FROM generate_series(1, 1000000) AS g`,
    `INSERT INTO job_queue.jobs (job_type, unique_key)
     SELECT 'report', 'pending:' || g FROM generate_series(1, 1000) AS g`,
  ],
  /** Ten types, each a backlog of 100,000 ready jobs of spread priorities. */
  tenTypes: [
    `INSERT INTO job_queue.jobs (job_type, priority, created_at)
     SELECT 't' || (g % 10), g % 200, now() - interval '1 day' + g * interval '1 ms'
     FROM generate_series(1, 1000000) AS g`,
  ],
} as const satisfies Record<string, readonly string[]>;

export type PlanShape = keyof typeof PLAN_SHAPES;

/** Bump when the way templates are built changes (not their content: that is hashed). */
const TEMPLATE_FORMAT = 'plan-template v1: fill, VACUUM ANALYZE, rename, no connections';
/**
 * The advisory lock that serialises builds of one template across test files, runs and checkouts
 * sharing the server (a key per template: different shapes build side by side).
 */
function buildLockKey(template: string): string {
  const digest = createHash('sha256').update(`nest-pg-job-queue-tests:${template}`).digest();
  return digest.readBigInt64BE(0).toString();
}
/** Templates of another hash made this long ago are dropped by the next build. */
const STALE_AFTER_DAYS = 7;
const SOURCE_DIR = join(__dirname, '..', '..', 'libs', 'job-queue', 'src');
/** What the migrations install: their own files, and the function bodies they import. */
const MIGRATION_SOURCE_DIRS = [
  join(SOURCE_DIR, 'migrations'),
  join(SOURCE_DIR, 'sql', 'functions'),
];

function templateName(shape: PlanShape): string {
  const hash = createHash('sha256').update(TEMPLATE_FORMAT);
  for (const dir of MIGRATION_SOURCE_DIRS) {
    for (const file of readdirSync(dir).sort()) {
      hash.update(`\0${file}\0`).update(readFileSync(join(dir, file)));
    }
  }
  for (const statement of PLAN_SHAPES[shape]) hash.update(`\0${statement}`);
  return `jq_plan_${shape}_${hash.digest('hex').slice(0, 16)}`;
}

function serverEnv(): { serverUrl: string; migrated: string } {
  const serverUrl = process.env[SERVER_URL_ENV];
  const migrated = process.env[TEMPLATE_DB_ENV];
  if (!serverUrl || !migrated) {
    throw new Error(`${SERVER_URL_ENV} is unset: run the tests through jest (globalSetup).`);
  }
  return { serverUrl, migrated };
}

/** Builds `name` from the run's migrated template plus the shape's rows, unless it exists. */
async function ensureTemplate(
  admin: Client,
  serverUrl: string,
  migrated: string,
  shape: PlanShape,
  name: string,
): Promise<void> {
  const { rowCount } = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
  if (rowCount) return;
  // Built under another name and renamed when complete: a template that exists is whole.
  const building = `${name}_build`;
  // Names are ours (a shape key and hex), never input: identifiers cannot be bind parameters.
  await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${building}" TEMPLATE "${migrated}"`);
  const client = new Client({ connectionString: withDatabase(serverUrl, building) });
  await client.connect();
  try {
    for (const statement of PLAN_SHAPES[shape]) await client.query(statement);
    await client.query(`VACUUM ANALYZE job_queue.jobs`);
  } finally {
    await client.end();
  }
  await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
  // Nobody connects to a template (autovacuum included, which would block a clone).
  await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  await admin.query(`COMMENT ON DATABASE "${name}" IS 'nest-pg-job-queue plan-test template'`);
  await dropStaleTemplates(admin, shape, name);
}

/**
 * Drops templates of `shape` of other hashes (older migrations or fills) made over `STALE_AFTER_DAYS`
 * ago: another checkout on this server may still use a recent one (an old one it needs again is
 * rebuilt; a clone under way holds the drop off until it is done).
 */
async function dropStaleTemplates(admin: Client, shape: PlanShape, keep: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT d.datname FROM pg_database d
      WHERE pg_catalog.starts_with(d.datname, $3::text) AND d.datname <> $1 AND d.datistemplate
        AND (pg_stat_file('base/' || d.oid || '/PG_VERSION')).modification
              < now() - $2::int * interval '1 day'`,
    [keep, STALE_AFTER_DAYS, `jq_plan_${shape}_`],
  );
  for (const { datname } of rows) {
    await admin.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`);
    await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}

/**
 * A fresh database holding `shape`'s rows and statistics, cloned from its template (built first
 * if this server has none for the current migrations and fill). Drop it in `afterAll`.
 */
export async function createPlanTestDatabase(shape: PlanShape): Promise<TestDatabase> {
  const { serverUrl, migrated } = serverEnv();
  const template = templateName(shape);
  await withAdminClient(serverUrl, async (admin) => {
    const lockKey = buildLockKey(template);
    await admin.query(`SELECT pg_advisory_lock($1::bigint)`, [lockKey]);
    try {
      await ensureTemplate(admin, serverUrl, migrated, shape, template);
    } finally {
      await admin.query(`SELECT pg_advisory_unlock($1::bigint)`, [lockKey]);
    }
  });
  const name = `jq_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (admin) =>
    admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`),
  );
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: () =>
      withAdminClient(serverUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      ).then(() => undefined),
  };
}

/** A plan test file's clone of `shape` and one client connected to it. */
export interface PlanTestDatabase {
  database: TestDatabase;
  client: Client;
}

/**
 * Registers a `beforeAll` that clones `shape` (building its template first if needed) and
 * connects a client, and an `afterAll` that ends the client and drops the clone. Fields are set
 * once `beforeAll` ran.
 */
export function usePlanTestDatabase(shape: PlanShape): PlanTestDatabase {
  const db = {} as PlanTestDatabase;
  beforeAll(async () => {
    db.database = await createPlanTestDatabase(shape);
    db.client = new Client({ connectionString: db.database.url });
    await db.client.connect();
  }, 120_000);
  afterAll(async () => {
    await db.client?.end();
    await db.database?.drop();
  });
  return db;
}

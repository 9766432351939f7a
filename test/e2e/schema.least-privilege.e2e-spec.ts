import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { exerciseEveryPath } from '../fixtures/every-path';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createHostileRole, HostileRole } from '../support/hostile-role';
import { createTestRole, sqlOn, TestRole, TestSql } from '../support/roles';
import { closeEveryPathWorker, startEveryPathWorker } from '../support/every-path-worker';
import { WorkerApp } from '../support/worker-test-app';

/**
 * What the README tells an owner role to grant the role its workers connect as: the schema's
 * USAGE, DML on the tables (the stats snapshot and the cron ticks record included), its sequence,
 * the claim and prune functions. No CREATE anywhere, no ownership.
 */
const RUNTIME_GRANTS = (role: string): string[] => [
  `GRANT USAGE ON SCHEMA job_queue TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON job_queue.jobs TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON job_queue.job_schedules TO ${role}`,
  `GRANT USAGE ON SEQUENCE job_queue.jobs_id_seq TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE ON job_queue.job_types TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE ON job_queue.job_stats TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE ON job_queue.job_schedule_ticks TO ${role}`,
  `GRANT SELECT, INSERT ON job_queue.job_events TO ${role}`,
  `GRANT SELECT, INSERT, DELETE ON job_queue.job_rate_starts TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON job_queue.job_rate_blocked TO ${role}`,
  `GRANT SELECT, INSERT, DELETE ON job_queue.job_dependencies TO ${role}`,
  `GRANT EXECUTE ON FUNCTION job_queue.claim_job_batch(text, text[], integer, timestamptz,
     boolean, integer[], integer[], integer[], integer[], float8[], text[], integer[],
     timestamptz[], bigint[]) TO ${role}`,
  `GRANT EXECUTE ON FUNCTION job_queue.prune_jobs(bigint, float8, float8, float8, float8, text[],
     text[], integer, timestamptz, text, text, bigint, bigint) TO ${role}`,
];

// The split a careful deployment uses: an owner role (here the database's owner, as an app's
// migration role usually is) runs the migrations and owns the queue's objects; the workers and
// producers connect as a runtime role that can read and write jobs and nothing more. A role that
// may create objects in public is there too, as in schema.hostile-public: nothing of it runs.
describe('schema: migrations as the owner role, the worker as a DML-only runtime role', () => {
  let db: TestDatabase;
  let owner: TestRole;
  let runtime: TestRole;
  let attacker: HostileRole;
  let worker: WorkerApp | undefined;
  let superuser: TestSql;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    superuser = sqlOn(db.url);
    owner = await createTestRole('jq_owner', db.url);
    runtime = await createTestRole('jq_runtime', db.url);
    // Owning the database: CREATE on it (for the queue's schema) and, since PostgreSQL 15, on
    // public (for TypeORM's migrations table).
    await superuser(`ALTER DATABASE ${db.name} OWNER TO ${owner.name}`);
    attacker = await createHostileRole(db.url);
  });

  afterAll(async () => {
    try {
      await closeEveryPathWorker(worker, db.url);
    } finally {
      await attacker?.drop();
      await db?.drop(); // with it, everything the owner owned and the runtime role was granted
      await runtime?.drop();
      await owner?.drop();
    }
  });

  it('runs the migrations as the owner, who grants the runtime role DML only', async () => {
    const dataSource = new DataSource({
      type: 'postgres',
      url: owner.url,
      migrations: jobQueueMigrations,
    });
    await dataSource.initialize();
    try {
      await dataSource.runMigrations();
      for (const grant of RUNTIME_GRANTS(runtime.name)) await dataSource.query(grant);
    } finally {
      await dataSource.destroy();
    }
    const [privileges] = await superuser(
      `SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS schema_owner,
              pg_catalog.has_schema_privilege($1::text, 'job_queue', 'CREATE') AS runtime_creates,
              pg_catalog.has_database_privilege($1::text, current_database(), 'CREATE')
                AS runtime_creates_schemas
       FROM pg_catalog.pg_namespace n WHERE n.nspname = 'job_queue'`,
      [runtime.name],
    );
    expect(privileges).toEqual({
      schema_owner: owner.name,
      runtime_creates: false,
      runtime_creates_schemas: false,
    });
    expect(await attacker.hits()).toBe(0);
  });

  it('runs a worker end to end as the runtime role', async () => {
    worker = await startEveryPathWorker(runtime.url);
    await exerciseEveryPath(worker, superuser, 'job_queue.jobs');
    expect(await attacker.hits()).toBe(0);
  });

  it.each([
    ['create a table in the schema', `CREATE TABLE job_queue.mine (x int)`],
    [
      'replace the trigger function',
      `CREATE OR REPLACE FUNCTION job_queue.jobs_notify_inserted()
       RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
    ],
    ['alter the table', `ALTER TABLE job_queue.jobs DROP CONSTRAINT jobs_status_check`],
    [
      'add a trigger',
      `CREATE TRIGGER mine AFTER INSERT ON job_queue.jobs
       FOR EACH STATEMENT EXECUTE FUNCTION job_queue.jobs_notify_inserted()`,
    ],
  ])('does not let the runtime role %s', async (_, statement) => {
    await expect(sqlOn(runtime.url)(statement)).rejects.toMatchObject({ code: '42501' });
  });
});

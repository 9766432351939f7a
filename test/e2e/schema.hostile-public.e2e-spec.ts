import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { exerciseEveryPath } from '../fixtures/every-path';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createHostileRole, HostileRole } from '../support/hostile-role';
import { sqlOn, TestSql } from '../support/roles';
import { closeEveryPathWorker, startEveryPathWorker } from '../support/every-path-worker';
import { WorkerApp } from '../support/worker-test-app';

/** The queue's table, as the test's own statements name it. */
const JOBS = 'job_queue.jobs';

// Before PostgreSQL 15 every role could create objects in `public`, and one GRANT allows it since.
// Such a role defines look-alikes of the operators and functions the queue uses (`=` for two
// varchar, `||` for bigint and text, unnest(bigint[]) …): whatever a statement resolves to one of
// them runs it with the caller's rights, and the worker here connects as a superuser. Nothing of
// the role's may ever run: not in the migrations (index predicates, CHECKs), not in the claim
// function, the trigger, or any statement the worker and QueueService send.
describe('schema: a role that creates objects in public', () => {
  let db: TestDatabase;
  let attacker: HostileRole;
  let worker: WorkerApp | undefined;
  let sql: TestSql;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    sql = sqlOn(db.url);
    attacker = await createHostileRole(db.url);
  });

  afterAll(async () => {
    try {
      await closeEveryPathWorker(worker, db.url);
    } finally {
      await attacker?.drop();
      await db?.drop();
    }
  });

  /**
   * Runs `step`, then checks that nothing of the role's ran, before reporting what else failed:
   * an operator of the role's that returns NULL often breaks the step too.
   */
  const withNothingOfTheirs = async (step: () => Promise<void>): Promise<void> => {
    let failure: unknown;
    try {
      await step();
    } catch (error) {
      failure = error;
    }
    expect({ timesTheRolesCodeRan: await attacker.hits() }).toEqual({ timesTheRolesCodeRan: 0 });
    if (failure) throw failure;
  };

  it('has its look-alikes in place, and a test of its own that they would run', async () => {
    // The trap works: a varchar comparison resolves to the role's operator.
    await sql(`SELECT 'a'::varchar = 'b'::varchar AS same`);
    expect(await attacker.hits()).toBe(1);
    await sql(`SELECT pg_catalog.setval('public.attacker_hits', 1, false)`);
    expect(await attacker.hits()).toBe(0);
  });

  it('never runs them in the migrations, run as a superuser', async () => {
    const dataSource = new DataSource({
      type: 'postgres',
      url: db.url,
      migrations: jobQueueMigrations,
    });
    await dataSource.initialize();
    try {
      await withNothingOfTheirs(async () => {
        await dataSource.runMigrations();
      });
    } finally {
      await dataSource.destroy();
    }
  });

  it('never runs them while a superuser worker enqueues, claims, completes, retries, cancels, reaps and hands back', async () => {
    worker = await startEveryPathWorker(db.url);
    const app = worker;
    await withNothingOfTheirs(() => exerciseEveryPath(app, sql, JOBS));
  });

  it('never runs them in the migrations going down and up again', async () => {
    // The migrations' own up() and down(), without TypeORM's bookkeeping (its migrations table is
    // the app's, in public, with varchar columns that the role's `=` would match).
    const dataSource = new DataSource({ type: 'postgres', url: db.url });
    await dataSource.initialize();
    const queryRunner = dataSource.createQueryRunner();
    try {
      await withNothingOfTheirs(async () => {
        const migrations = jobQueueMigrations.map((Migration) => new Migration());
        for (const migration of [...migrations].reverse()) await migration.down(queryRunner);
        expect(await sql(`SELECT 1 FROM pg_namespace WHERE nspname = 'job_queue'`)).toEqual([]);
        for (const migration of migrations) await migration.up(queryRunner);
      });
    } finally {
      await queryRunner.release();
      await dataSource.destroy();
    }
  });
});

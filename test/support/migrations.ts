import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from './database';

/**
 * A fresh database with no migration run, and a DataSource holding the queue's migrations, for
 * tests of the migrations themselves (made in `beforeAll`, dropped in `afterAll`). Call inside a
 * `describe`; the returned function gives the DataSource once `beforeAll` has run.
 */
export function useUnmigratedDataSource(): () => DataSource {
  let db: TestDatabase | undefined;
  let dataSource: DataSource | undefined;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = new DataSource({ type: 'postgres', url: db.url, migrations: jobQueueMigrations });
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  return () => {
    if (!dataSource) throw new Error('useUnmigratedDataSource: beforeAll has not run');
    return dataSource;
  };
}

/** A function of the `job_queue` schema as the catalog holds it. */
export interface QueueFunction {
  body: string;
  /** Its SET clauses, `name=value` (`proconfig`). */
  settings: string[];
  acl: string | null;
  owner: string;
}

/** `argumentTypes` picks one signature of a function that has several (`prune_jobs`). */
export async function queueFunction(
  dataSource: DataSource,
  name: string,
  argumentTypes?: string,
): Promise<QueueFunction> {
  const rows = await dataSource.query(
    `SELECT p.prosrc AS body, p.proconfig AS settings, p.proacl::text AS acl,
            pg_catalog.pg_get_userbyid(p.proowner) AS owner
     FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'job_queue' AND p.proname = $1
       AND ($2::text IS NULL OR p.oid = ('job_queue.' || $1 || '(' || $2 || ')')::regprocedure)`,
    [name, argumentTypes ?? null],
  );
  if (rows.length !== 1) {
    throw new Error(`${rows.length} functions job_queue.${name}: name the argument types`);
  }
  return rows[0] as QueueFunction;
}

/**
 * Undoes migrations, newest first, down to and including the one named `name`
 * (`SkipPausedJobTypesInClaim1795939200006`), so that a test of one migration's `down()` keeps
 * working when newer migrations are added after it.
 */
export async function undoMigrationsThrough(dataSource: DataSource, name: string): Promise<void> {
  const executed = (await dataSource.query(
    `SELECT name FROM migrations ORDER BY id DESC`,
  )) as Array<{
    name: string;
  }>;
  const index = executed.findIndex((migration) => migration.name === name);
  if (index < 0) throw new Error(`Migration ${name} has not run`);
  for (let i = 0; i <= index; i++) await dataSource.undoLastMigration();
}

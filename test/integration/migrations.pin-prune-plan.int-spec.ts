import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { undoMigrationsThrough } from '../support/undo-migrations';

interface PruneFunction {
  body: string;
  settings: string[];
  acl: string | null;
  owner: string;
}

/**
 * PinPrunePlan gives prune_jobs() the nested-loop settings and takes them back on the way down;
 * the body, owner and grants (no EXECUTE for PUBLIC) stay as they were either way.
 */
describe('migration PinPrunePlan', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = new DataSource({ type: 'postgres', url: db.url, migrations: jobQueueMigrations });
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const pruneFunction = async (): Promise<PruneFunction> => {
    const [row] = await dataSource.query(
      `SELECT p.prosrc AS body, p.proconfig AS settings, p.proacl::text AS acl,
              pg_catalog.pg_get_userbyid(p.proowner) AS owner
       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'job_queue' AND p.proname = 'prune_jobs'`,
    );
    return row as PruneFunction;
  };

  it('adds nested-loop-only settings and removes them on the way down, keeping body and grants', async () => {
    await dataSource.runMigrations();
    const pinned = await pruneFunction();
    expect(pinned.settings).toEqual([
      'search_path=pg_catalog, pg_temp',
      'jit=off',
      'enable_hashjoin=off',
      'enable_mergejoin=off',
      'enable_bitmapscan=off',
    ]);
    expect(pinned.acl).not.toMatch(/(^|[{,])=X/); // no EXECUTE for PUBLIC

    await undoMigrationsThrough(dataSource, 'PinPrunePlan1795939200007');
    const before = await pruneFunction();
    expect(before.settings).toEqual(['search_path=pg_catalog, pg_temp', 'jit=off']);
    expect({ ...before, settings: [] }).toEqual({ ...pinned, settings: [] });

    await dataSource.runMigrations();
    expect(await pruneFunction()).toEqual(pinned);
  });
});

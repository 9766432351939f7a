import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase } from '../support/database';
import { useUnmigratedDataSource } from '../support/migrations';

const SEED_COLUMNS = [
  'id',
  'job_type',
  'priority',
  'status',
  'data',
  'progress',
  'current_stage',
  'events_count',
  'worker_id',
  'claimed_at',
  'created_at',
  'started_at',
  'completed_at',
  'attempts',
  'max_attempts',
  'last_error',
];
const ADDED_COLUMNS = ['run_at', 'heartbeat_at', 'unique_key', 'result', 'updated_at'];

describe('migrations', () => {
  const dataSource = useUnmigratedDataSource();

  const columns = async (): Promise<string[]> =>
    (
      await dataSource().query(
        `SELECT column_name FROM information_schema.columns
         WHERE table_schema = 'job_queue' AND table_name = 'jobs'`,
      )
    ).map((row: { column_name: string }) => row.column_name);

  const functions = async (): Promise<string[]> =>
    (
      await dataSource().query(
        `SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'job_queue' AND p.proname IN ('claim_job_batch', 'jobs_notify_inserted')`,
      )
    ).map((row: { proname: string }) => row.proname);

  const schemaExists = async (): Promise<boolean> =>
    (
      await dataSource().query(
        `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'job_queue') AS present`,
      )
    )[0].present;

  it('go up, all the way down, and up again on an empty database', async () => {
    await dataSource().runMigrations();
    expect(await columns()).toEqual(expect.arrayContaining([...SEED_COLUMNS, ...ADDED_COLUMNS]));
    expect((await functions()).sort()).toEqual(['claim_job_batch', 'jobs_notify_inserted']);

    for (let i = 0; i < jobQueueMigrations.length; i++) await dataSource().undoLastMigration();
    expect(await columns()).toEqual([]);
    expect(await functions()).toEqual([]);
    expect(await schemaExists()).toBe(false); // the first migration made it, its down drops it
    const [{ count }] = await dataSource().query(`SELECT count(*)::int AS count FROM migrations`);
    expect(count).toBe(0);

    await dataSource().runMigrations();
    expect(await columns()).toEqual(expect.arrayContaining([...SEED_COLUMNS, ...ADDED_COLUMNS]));
  });

  it("keep a schema that was there before them (a DBA's), and anything else in it", async () => {
    const before = await createTestDatabase({ migrated: false });
    const other = new DataSource({
      type: 'postgres',
      url: before.url,
      migrations: jobQueueMigrations,
    });
    await other.initialize();
    try {
      await other.query(`CREATE SCHEMA job_queue`);
      await other.runMigrations();
      for (let i = 0; i < jobQueueMigrations.length; i++) await other.undoLastMigration();
      const [{ present }] = await other.query(
        `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'job_queue') AS present`,
      );
      expect(present).toBe(true);

      // Made by the migrations, but holding an object of the app's by the time they go down.
      await other.query(`DROP SCHEMA job_queue`);
      await other.runMigrations();
      await other.query(`CREATE TABLE job_queue.app_notes (note text)`);
      for (let i = 0; i < jobQueueMigrations.length; i++) await other.undoLastMigration();
      expect(await other.query(`SELECT count(*)::int AS n FROM job_queue.app_notes`)).toEqual([
        { n: 0 },
      ]);
    } finally {
      await other.destroy();
      await before.drop();
    }
  });

  it('make text columns text (with length CHECKs) and pin the functions to pg_catalog', async () => {
    const types = await dataSource().query(
      `SELECT column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'job_queue' AND table_name = 'jobs'
         AND column_name IN ('job_type', 'status', 'current_stage', 'worker_id', 'unique_key',
                             'concurrency_key')`,
    );
    expect(types).toHaveLength(6);
    expect(types.filter((row: { data_type: string }) => row.data_type !== 'text')).toEqual([]);
    await expect(
      dataSource().query(`INSERT INTO job_queue.jobs (job_type) VALUES (repeat('x', 256))`),
    ).rejects.toThrow(/jobs_job_type_length_check/);
    const configs = await dataSource().query(
      `SELECT p.proname, p.proconfig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'job_queue' ORDER BY p.proname`,
    );
    expect(configs).toEqual([
      {
        proname: 'claim_job_batch',
        proconfig: expect.arrayContaining(['search_path=pg_catalog, pg_temp']),
      },
      { proname: 'job_unique_state_counts', proconfig: ['search_path=pg_catalog, pg_temp'] },
      { proname: 'jobs_dead_letter', proconfig: ['search_path=pg_catalog, pg_temp'] },
      { proname: 'jobs_keep_dependencies', proconfig: ['search_path=pg_catalog, pg_temp'] },
      { proname: 'jobs_notify_inserted', proconfig: ['search_path=pg_catalog, pg_temp'] },
      { proname: 'jobs_release_key_slot', proconfig: ['search_path=pg_catalog, pg_temp'] },
      {
        proname: 'jobs_reopen_dependants',
        proconfig: ['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_custom_plan'],
      },
      {
        proname: 'jobs_resolve_dependants',
        proconfig: ['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_custom_plan'],
      },
      // Two signatures: the previous release's pruners call the second, this one the third.
      {
        proname: 'prune_jobs',
        proconfig: expect.arrayContaining(['search_path=pg_catalog, pg_temp']),
      },
      {
        proname: 'prune_jobs',
        proconfig: expect.arrayContaining(['search_path=pg_catalog, pg_temp']),
      },
    ]);
  });

  it('keep the seed status CHECK: an unknown status is refused', async () => {
    await expect(
      dataSource().query(`INSERT INTO job_queue.jobs (job_type, status) VALUES ('t', 'bogus')`),
    ).rejects.toThrow(/jobs_status_check/);
  });
});

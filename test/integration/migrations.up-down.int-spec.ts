import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';

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

  const columns = async (): Promise<string[]> =>
    (
      await dataSource.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'jobs'`,
      )
    ).map((row: { column_name: string }) => row.column_name);

  const functions = async (): Promise<string[]> =>
    (
      await dataSource.query(
        `SELECT proname FROM pg_proc WHERE proname IN ('claim_job_batch', 'jobs_notify_inserted')`,
      )
    ).map((row: { proname: string }) => row.proname);

  it('go up, all the way down, and up again on an empty database', async () => {
    await dataSource.runMigrations();
    expect(await columns()).toEqual(expect.arrayContaining([...SEED_COLUMNS, ...ADDED_COLUMNS]));
    expect((await functions()).sort()).toEqual(['claim_job_batch', 'jobs_notify_inserted']);

    for (let i = 0; i < jobQueueMigrations.length; i++) await dataSource.undoLastMigration();
    expect(await columns()).toEqual([]);
    expect(await functions()).toEqual([]);
    const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM migrations`);
    expect(count).toBe(0);

    await dataSource.runMigrations();
    expect(await columns()).toEqual(expect.arrayContaining([...SEED_COLUMNS, ...ADDED_COLUMNS]));
  });

  it('keep the seed status CHECK: an unknown status is refused', async () => {
    await expect(
      dataSource.query(`INSERT INTO jobs (job_type, status) VALUES ('t', 'bogus')`),
    ).rejects.toThrow(/jobs_status_check/);
  });
});

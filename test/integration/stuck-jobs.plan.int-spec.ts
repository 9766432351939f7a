import { Client } from 'pg';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import {
  RELEASE_STUCK_JOBS,
  releaseStuckJobs,
} from '../../libs/job-queue/src/sql/release-stuck-jobs.query';
import { createTestDatabase, TestDatabase } from '../support/database';

const FINISHED = 1_000_000;
const KEYS = 1_000;
const WAITING_PER_KEY = 5;

/**
 * The stuck-job pass beside a million finished jobs and 5,000 waiting ones over 1,000 keys, one
 * of them held by a running job: it descends once per key through `jobs_key_waiting_idx` and
 * reads no finished row. Run as the reaper runs it (rolled back, and through EXPLAIN).
 */
describe('stuck waiting jobs: plan beside a million finished jobs', () => {
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, completed_at)
       SELECT 'mail', 'completed', now() - g * interval '1 second'
       FROM generate_series(1, $1::int) AS g`,
      [FINISHED],
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, status, updated_at)
       SELECT 'mail', 'tenant-' || (g % $1::int), 'waiting', now() - interval '1 hour'
       FROM generate_series(1, $2::int) AS g`,
      [KEYS, KEYS * WAITING_PER_KEY],
    );
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, status) VALUES ('mail', 'tenant-7', 'running')`,
    );
    await client.query(`VACUUM ANALYZE job_queue.jobs`);
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('moves every stuck key but the held one, reading each key once', async () => {
    await client.query('BEGIN');
    try {
      const released = await releaseStuckJobs(
        { query: (sql, params) => client.query(sql, params).then((r) => r.rows) },
        DEFAULT_SCHEMA,
        60_000,
      );
      expect(released).toEqual([
        { jobType: 'mail', moved: (KEYS - 1) * WAITING_PER_KEY, oldestId: expect.any(String) },
      ]);
    } finally {
      await client.query('ROLLBACK');
    }
    // The same statement, explained and rolled back: the skip scan and the per-key checks read
    // indexes only, never the table.
    const schema = queueSchema(DEFAULT_SCHEMA);
    await client.query(`PREPARE stuck AS ${schema.statement(RELEASE_STUCK_JOBS)}`);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT)
         EXECUTE stuck(${schema.lockKey('stuck')}, 60000, NULL, 'x', 'y')`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).not.toMatch(/Seq Scan on jobs\b/);
      expect(plan).toMatch(/Index (Only )?Scan using jobs_key_waiting_idx/);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});

import { Client } from 'pg';
import { createTestDatabase, TestDatabase } from '../support/database';
import { connect } from './claim-job-batch.support';

// A sudden backlog on a table the planner has no statistics for (a new table, or before
// autovacuum's next ANALYZE) once made the claim scan every pending row, sort them, and, once
// sorts were discouraged, JIT-compile the statement: 23-360 ms a claim instead of about 1 ms.
describe('claim_job_batch on a backlog without statistics', () => {
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = await connect(db.url);
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, priority, data)
       SELECT 'noop', (i % 7) * 10, '{}' FROM generate_series(1, 50000) AS i`,
    );
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('still reads jobs_claim_idx in order, without a sort of the backlog or JIT', async () => {
    const [{ analyzed }] = (
      await client.query(
        `SELECT last_analyze IS NULL AND last_autoanalyze IS NULL AS analyzed
         FROM pg_stat_user_tables WHERE schemaname = 'job_queue' AND relname = 'jobs'`,
      )
    ).rows;
    expect(analyzed).toBe(true); // i.e. never analyzed: the case under test

    const plans: string[] = [];
    const onNotice = (notice: { message?: string }) => {
      if (notice.message?.includes('FOR UPDATE SKIP LOCKED')) plans.push(notice.message);
    };
    client.on('notice', onNotice);
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 0`);
    await client.query(`SET auto_explain.log_nested_statements = on`);
    await client.query(`SET auto_explain.log_level = 'notice'`);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(
        `SELECT * FROM job_queue.claim_job_batch('w', ARRAY['noop'], 200, NULL, true)`,
      );
      expect(rows).toHaveLength(200);
      expect(rows.every((row: { priority: number }) => row.priority === 60)).toBe(true);
    } finally {
      await client.query('ROLLBACK');
      client.off('notice', onNotice);
    }

    expect(plans).toHaveLength(1);
    const [plan] = plans;
    expect(plan).toContain('Index Scan using jobs_claim_idx on jobs');
    expect(plan).not.toMatch(/Bitmap Heap Scan on jobs|Seq Scan on jobs/);
    expect(plan).not.toContain('JIT');
    // The sorts left order the claimed rows (RETURNING) and, with several types, the few rows of
    // their heads (under a Limit per type): never the backlog.
    expect(plan.match(/Sort Key: .*/g)).toEqual([
      'Sort Key: claimed.priority DESC, claimed.created_at, claimed.id',
      'Sort Key: j.priority DESC, j.created_at, j.id',
    ]);
  });
});

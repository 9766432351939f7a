import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The claim, as one statement: pick the best claimable jobs (priority DESC, then oldest, then id),
 * skip rows other workers hold, and mark them claimed for `$1`.
 * Parameters: $1 worker id, $2 job types, $3 batch size, $4 "now" (NULL: the transaction's now();
 * tests pass a fixed time), $5 start: mark the jobs `running` (with `started_at`) at once, for a
 * worker that starts every job it claims; saves a second write per batch.
 *
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const CLAIM_JOB_BATCH_QUERY_V1 = `
  WITH candidates AS (
    SELECT id FROM jobs
    WHERE status = 'pending' AND job_type = ANY($2) AND run_at <= COALESCE($4, now())
    ORDER BY priority DESC, created_at ASC, id ASC
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC`;

/**
 * `claim_job_batch(p_worker_id, p_job_types, p_batch_size)`, the seed's signature and contract
 * (status 'claimed'), plus optional `p_now` and `p_start`; and the partial index whose order is exactly the claim's ORDER BY,
 * so the claim reads a few index entries however many finished rows the table holds.
 */
export class CreateClaimJobBatchFunction1795939200001 implements MigrationInterface {
  name = 'CreateClaimJobBatchFunction1795939200001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX jobs_claim_idx ON jobs (priority DESC, created_at ASC, id ASC)
        WHERE status = 'pending'
    `);
    // The SET clauses pin the plan to an ordered scan of jobs_claim_idx. Without statistics (a
    // new table, or a sudden backlog before autovacuum analyzes it) the planner otherwise picks
    // a bitmap scan of every pending row plus a sort: measured 4-5x slower processing. Turning
    // sorts off adds a huge cost to the plan, which would switch on JIT (~360 ms a call): jit off.
    await queryRunner.query(`
      CREATE FUNCTION claim_job_batch(
        p_worker_id varchar,
        p_job_types varchar[],
        p_batch_size integer,
        p_now timestamptz DEFAULT NULL,
        p_start boolean DEFAULT false
      ) RETURNS SETOF jobs LANGUAGE plpgsql
        SET enable_bitmapscan = off SET enable_sort = off SET jit = off
      AS $fn$
      BEGIN
        RETURN QUERY ${CLAIM_JOB_BATCH_QUERY_V1};
      END
      $fn$
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION claim_job_batch(varchar, varchar[], integer, timestamptz, boolean)`,
    );
    await queryRunner.query(`DROP INDEX jobs_claim_idx`);
  }
}

import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { claimJobBatchQueryV1 } from './1795939200001-CreateClaimJobBatchFunction';
import { MigrationClass, schemaMigration } from './schema-migration';

/**
 * The claim of `claimJobBatchQueryV1`, word for word, but for one clause: a requested type whose
 * `job_types` row is paused (`paused_at` set, by `QueueService.pause()`) is dropped from `types`
 * before anything is read, so none of its jobs is claimed by any node, and its backlog costs the
 * claim nothing (its queue in `jobs_claim_idx` is never opened). The look-up is one primary-key
 * probe of `job_types` per requested type, made once per claim (`types` is materialised: the
 * later steps read it several times); a type with no row is not paused.
 *
 * A pause is seen by every claim that starts after it commits, on every node; a claim already
 * under way may still take the type's jobs. Running jobs are left alone: they finish.
 *
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const claimJobBatchQueryV2 = (schema: QueueSchema): string => `
  WITH types AS (
    SELECT t.job_type,
           min(LEAST(COALESCE(t.cap, $3), $3)) AS cap,
           min(t.max_attempts) AS max_attempts,
           min(t.backoff_base_ms) AS backoff_base_ms,
           min(t.backoff_max_ms) AS backoff_max_ms,
           min(t.backoff_jitter) AS backoff_jitter
    FROM unnest($2::text[], $6::integer[], $7::integer[], $8::integer[], $9::integer[],
                $10::float8[])
      AS t(job_type, cap, max_attempts, backoff_base_ms, backoff_max_ms, backoff_jitter)
    WHERE t.job_type IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM ${schema.jobTypes} paused
                      WHERE paused.job_type = t.job_type AND paused.paused_at IS NOT NULL)
    GROUP BY t.job_type
    HAVING min(LEAST(COALESCE(t.cap, $3), $3)) > 0
  ), heads AS (
    SELECT types.job_type, head.priority, head.created_at, head.id
    FROM types CROSS JOIN LATERAL (
      SELECT j.priority, j.created_at, j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = types.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT types.cap
    ) AS head
    WHERE (SELECT count(*) FROM types) > 1
  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT job_type FROM heads ORDER BY priority DESC, created_at ASC, id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*,
           CASE WHEN (SELECT count(*) FROM types) > 1 THEN COALESCE(shares.take, 0)
                ELSE types.cap END AS take
    FROM types LEFT JOIN shares ON shares.job_type = types.job_type
  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = takes.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT takes.take
      FOR UPDATE SKIP LOCKED
    ) AS locked
    WHERE takes.take > 0
  ), claimed AS (
    UPDATE ${schema.jobs} AS jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1,
      run_token = jobs.run_token + 1,
      max_attempts = COALESCE(jobs.max_attempts, candidates.max_attempts),
      backoff_base_ms = COALESCE(jobs.backoff_base_ms, candidates.backoff_base_ms),
      backoff_max_ms = COALESCE(jobs.backoff_max_ms, candidates.backoff_max_ms),
      backoff_jitter = COALESCE(jobs.backoff_jitter, candidates.backoff_jitter)
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC`;

/**
 * Replaces the body of `claim_job_batch` (same signature, same SET clauses). CREATE OR REPLACE
 * keeps the function's owner and its grants (the runtime role's EXECUTE, no PUBLIC).
 */
async function replaceClaimJobBatch(
  queryRunner: QueryRunner,
  schema: QueueSchema,
  claimQuery: string,
): Promise<void> {
  // The SET clauses pin the plan to ordered scans of jobs_claim_idx. Without statistics (a
  // new table, or a sudden backlog before autovacuum analyzes it) the planner otherwise picks
  // a bitmap scan of every pending row of a type plus a sort: measured 4-5x slower processing.
  // Turning sorts off adds a huge cost to the plan (the merge of the heads still sorts, a few
  // rows), which would switch on JIT (~360 ms a call): jit off. A per-type LIMIT is a column,
  // not a known number, so the planner guesses a tenth of the backlog; with nothing but pending
  // rows it then hashed the whole table to find the claimed ones: nested loops only (each join
  // here is a few rows, and the update finds its rows by primary key). search_path: nothing
  // in the body resolves outside pg_catalog (the tables are named with their schema).
  await queryRunner.query(`
    CREATE OR REPLACE FUNCTION ${schema.claimJobBatch}(
      p_worker_id text,
      p_job_types text[],
      p_batch_size integer,
      p_now timestamptz DEFAULT NULL,
      p_start boolean DEFAULT false,
      p_type_caps integer[] DEFAULT NULL,
      p_max_attempts integer[] DEFAULT NULL,
      p_backoff_base_ms integer[] DEFAULT NULL,
      p_backoff_max_ms integer[] DEFAULT NULL,
      p_backoff_jitter float8[] DEFAULT NULL
    ) RETURNS SETOF ${schema.jobs} LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET enable_bitmapscan = off SET enable_sort = off SET jit = off
      SET enable_hashjoin = off SET enable_mergejoin = off
    AS $fn$
    BEGIN
      RETURN QUERY ${claimQuery};
    END
    $fn$
  `);
}

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await replaceClaimJobBatch(queryRunner, schema, claimJobBatchQueryV2(schema));
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await replaceClaimJobBatch(queryRunner, schema, claimJobBatchQueryV1(schema));
}

/**
 * `claim_job_batch` skips paused job types (`job_types.paused_at`, see `claimJobBatchQueryV2`):
 * `QueueService.pause(type)` / `resume(type)` act on every node at its next claim. Same
 * signature and contract otherwise; `down()` puts `claimJobBatchQueryV1` back.
 *
 * The role the workers connect as now needs SELECT on `job_types` (see the README's runtime role).
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function skipPausedJobTypesInClaimFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('SkipPausedJobTypesInClaim', 1795939200006, schema, up, down);
}

import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

/**
 * The claim, as one statement: the best claimable jobs across the requested types in one order
 * (priority DESC, then oldest, then id), at most `cap` of each type, rows other workers hold
 * skipped; marks them claimed for `$1` with a new fencing token, and fixes their policy.
 *
 * Parameters: $1 worker id, $2 job types, $3 batch size, $4 "now" (NULL: the transaction's now();
 * tests pass a fixed time), $5 start: mark the jobs `running` (with `started_at`) at once, for a
 * worker that starts every job it claims; saves a second write per batch. Then one array per
 * type, aligned with $2 (NULL, or a NULL element: none for that type): $6 how many of the type
 * this claim may take (a type at its own concurrency limit gets 0: it is skipped, not queued
 * ahead; NULL: up to the batch size), and the handler's policy that the claim writes into the
 * job's NULL columns, $7 `max_attempts`, $8 `backoff_base_ms`, $9 `backoff_max_ms`,
 * $10 `backoff_jitter`.
 *
 * Shape: each type's queue is the head of `jobs_claim_idx` (led by job_type, then the claim's
 * order), read with `LIMIT` so the claim reads a few index entries per type however many
 * finished, later or other-type rows the table holds. Jobs due later are `scheduled`, outside
 * that index, until the stager makes them `pending` once due; `run_at <= now` stays as a
 * safeguard (a row made `pending` by hand with a later `run_at`) and costs nothing otherwise.
 * - One type open: lock its first `cap` claimable rows (SKIP LOCKED), as a plain claim would.
 * - Several: first read each type's head without locking (`heads`), merge those few rows in the
 *   one order and cut to the batch: that says how many each type gets (`shares`); then lock that
 *   many of each type (SKIP LOCKED). Locking each head whole and keeping the best would hold
 *   rows it does not claim until the statement ends, hiding them from concurrent claimers.
 *   Under contention a type's locked rows may be a little further down its queue than the
 *   heads said, as SKIP LOCKED allows; without it the order is exact.
 *
 * Every claim increments `run_token`, never reset by anything: the run it starts is fenced from
 * every earlier run of the job.
 *
 * The function runs it with `search_path = pg_catalog, pg_temp`: the table is named with its
 * schema, and every other name (unnest, now, count, the operators) is pg_catalog's.
 *
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const claimJobBatchQueryV1 = (schema: QueueSchema): string => `
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

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    CREATE INDEX jobs_claim_idx ON ${schema.jobs} (job_type, priority DESC, created_at ASC, id ASC)
      WHERE status = 'pending'
  `);
  // The SET clauses pin the plan to ordered scans of jobs_claim_idx. Without statistics (a
  // new table, or a sudden backlog before autovacuum analyzes it) the planner otherwise picks
  // a bitmap scan of every pending row of a type plus a sort: measured 4-5x slower processing.
  // Turning sorts off adds a huge cost to the plan (the merge of the heads still sorts, a few
  // rows), which would switch on JIT (~360 ms a call): jit off. A per-type LIMIT is a column,
  // not a known number, so the planner guesses a tenth of the backlog; with nothing but pending
  // rows it then hashed the whole table to find the claimed ones: nested loops only (each join
  // here is a few rows, and the update finds its rows by primary key). search_path: nothing
  // in the body resolves outside pg_catalog (the table is named with its schema).
  await queryRunner.query(`
    CREATE FUNCTION ${schema.claimJobBatch}(
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
      RETURN QUERY ${claimJobBatchQueryV1(schema)};
    END
    $fn$
  `);
  // Callable by the roles it is granted to (see the README's runtime role), not by every role.
  await queryRunner.query(
    `REVOKE ALL ON FUNCTION ${CLAIM_JOB_BATCH_SIGNATURE(schema)} FROM PUBLIC`,
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP FUNCTION ${CLAIM_JOB_BATCH_SIGNATURE(schema)}`);
  await queryRunner.query(`DROP INDEX ${schema.quoted}.jobs_claim_idx`);
}

const CLAIM_JOB_BATCH_SIGNATURE = (schema: QueueSchema): string =>
  `${schema.claimJobBatch}(text, text[], integer, timestamptz, boolean, integer[], integer[],
     integer[], integer[], float8[])`;

/**
 * `claim_job_batch(p_worker_id, p_job_types, p_batch_size)`, the seed's signature and contract
 * (status 'claimed', priority DESC then created_at then id across every type given), plus
 * optional `p_now`, `p_start`, per-type caps and policy (see `claimJobBatchQueryV1`); and the
 * partial index the claim walks: led by job_type, then exactly the claim's order, over pending
 * rows only, so each type's head is a few index entries however many finished rows, jobs of
 * other types or jobs due later (`scheduled`, see `jobs_scheduled_idx`) the table holds.
 */
export function createClaimJobBatchFunctionFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateClaimJobBatchFunction', 1795939200001, schema, up, down);
}

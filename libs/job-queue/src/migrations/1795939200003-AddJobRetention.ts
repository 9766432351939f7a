import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

/**
 * The statement `prune_jobs()` runs; exported so the plan test EXPLAINs exactly this text.
 *
 * Shape: `types` lists the job types that have finished jobs by skipping through
 * `jobs_finished_idx` (one descent per type, not a read of every row); `rules` gives each type
 * and finished status its retention: the one a worker stored in `job_types`, else the module
 * default passed in ($2-$4), or `$5` for an operator's `olderThanMs`; `doomed` reads each rule's
 * oldest rows past it through the same index, `LIMIT` rows at most in all, and locks them
 * (`SKIP LOCKED`: a job being retried this instant is skipped; the status is checked again on
 * the locked row, so an unfinished job is never deleted). $1 the advisory lock key to try (NULL:
 * none), $6 statuses and $7 types to keep to (NULL: all), $8 the most rows to delete.
 *
 * Returns one row: whether the lock was got (when asked for) and how many jobs were deleted.
 */
export const pruneJobsQueryV1 = (schema: QueueSchema): string => `
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS got
  ), types AS (
    (SELECT j.job_type FROM ${schema.jobs} j
     WHERE j.status IN ('completed', 'failed', 'cancelled') AND (SELECT lock.got FROM lock)
     ORDER BY j.job_type LIMIT 1)
    UNION ALL
    SELECT (SELECT j.job_type FROM ${schema.jobs} j
            WHERE j.status IN ('completed', 'failed', 'cancelled')
              AND j.job_type > types.job_type
            ORDER BY j.job_type LIMIT 1)
    FROM types WHERE types.job_type IS NOT NULL
  ), rules AS (
    SELECT types.job_type, s.status,
           CASE WHEN $5::float8 IS NOT NULL THEN $5::float8
                WHEN t.retention_updated_at IS NULL THEN s.default_ms
                WHEN s.status = 'completed' THEN t.completed_retention_ms::float8
                WHEN s.status = 'failed' THEN t.failed_retention_ms::float8
                ELSE t.cancelled_retention_ms::float8 END AS keep_ms
    FROM types
      CROSS JOIN (VALUES ('completed'::text, $2::float8), ('failed'::text, $3::float8),
                         ('cancelled'::text, $4::float8)) AS s(status, default_ms)
      LEFT JOIN ${schema.jobTypes} t ON t.job_type = types.job_type
    WHERE types.job_type IS NOT NULL
      AND ($6::text[] IS NULL OR s.status = ANY ($6::text[]))
      AND ($7::text[] IS NULL OR types.job_type = ANY ($7::text[]))
  ), doomed AS (
    SELECT old.id FROM rules CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.status IN ('completed', 'failed', 'cancelled')
        AND j.job_type = rules.job_type AND j.status = rules.status
        AND j.completed_at < pg_catalog.now() - rules.keep_ms * interval '1 millisecond'
      ORDER BY j.completed_at
      LIMIT $8::integer
      FOR UPDATE OF j SKIP LOCKED
    ) AS old
    WHERE rules.keep_ms IS NOT NULL
    LIMIT $8::integer
  ), gone AS (
    DELETE FROM ${schema.jobs} AS j USING doomed
    WHERE j.id = doomed.id AND j.status IN ('completed', 'failed', 'cancelled')
    RETURNING j.id
  )
  SELECT (SELECT lock.got FROM lock), pg_catalog.count(*)::integer FROM gone`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // A handler's retention, stored by the worker that has the handler so that every node prunes
  // its type alike. `retention_updated_at` NULL: no handler stored one (say, the row is there
  // only because the type was paused); the pruning node's module default applies. Set, a NULL
  // column keeps that status forever.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      ADD COLUMN completed_retention_ms bigint,
      ADD COLUMN failed_retention_ms bigint,
      ADD COLUMN cancelled_retention_ms bigint,
      ADD COLUMN retention_updated_at timestamptz,
      ADD CONSTRAINT job_types_retention_check CHECK (
        completed_retention_ms >= 0 AND failed_retention_ms >= 0 AND cancelled_retention_ms >= 0)
  `);
  // The pruner's way to the old finished rows of one type and status, oldest first, without
  // reading the rest of the table. Only finished rows are in it, so it costs one index entry per
  // job, written when the job finishes. IF NOT EXISTS: on a big table, build it by hand first
  // with CREATE INDEX CONCURRENTLY (same name and definition), and this migration skips it.
  await queryRunner.query(`
    CREATE INDEX IF NOT EXISTS jobs_finished_idx ON ${schema.jobs} (job_type, status, completed_at)
      WHERE status IN ('completed', 'failed', 'cancelled')
  `);
  // A queue table's rows are short-lived: each job leaves about three dead row versions (claim,
  // finish, prune). With the defaults (vacuum once dead rows pass 20% of the table) a busy table
  // carries a fifth of its size in dead rows and dead index entries; 5% keeps that small. Only
  // autovacuum's trigger changes: no rewrite, and a brief SHARE UPDATE EXCLUSIVE lock.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} SET (
      autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
      autovacuum_analyze_scale_factor = 0.05, autovacuum_analyze_threshold = 1000)
  `);
  // A function, like the claim, for its settings: JIT off (the planner's estimate grows with the
  // table while the statement reads a batch; past jit_above_cost it would compile every call,
  // hundreds of ms), and the pinned search_path.
  await queryRunner.query(`
    CREATE FUNCTION ${schema.quoted}.prune_jobs(
      p_lock_key bigint,
      p_completed_ms float8,
      p_failed_ms float8,
      p_cancelled_ms float8,
      p_older_than_ms float8,
      p_statuses text[],
      p_types text[],
      p_limit integer
    ) RETURNS TABLE (held boolean, deleted integer) LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET jit = off
    AS $fn$
    BEGIN
      RETURN QUERY ${pruneJobsQueryV1(schema)};
    END
    $fn$
  `);
  await queryRunner.query(
    `REVOKE ALL ON FUNCTION ${schema.quoted}.prune_jobs(bigint, float8, float8, float8, float8,
       text[], text[], integer) FROM PUBLIC`,
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    `DROP FUNCTION ${schema.quoted}.prune_jobs(bigint, float8, float8, float8, float8, text[],
       text[], integer)`,
  );
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} RESET (
      autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
      autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)
  `);
  await queryRunner.query(`DROP INDEX IF EXISTS ${schema.quoted}.jobs_finished_idx`);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      DROP CONSTRAINT job_types_retention_check,
      DROP COLUMN completed_retention_ms,
      DROP COLUMN failed_retention_ms,
      DROP COLUMN cancelled_retention_ms,
      DROP COLUMN retention_updated_at
  `);
}

/**
 * Retention: per-type retention columns on `job_types` (written by workers for their handlers),
 * `jobs_finished_idx` and `prune_jobs()` (see `pruneJobsQueryV1`) for the pruner, and autovacuum
 * settings for a table whose rows come and go (see the README's "Retention").
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addJobRetentionFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddJobRetention', 1795939200003, schema, up, down);
}

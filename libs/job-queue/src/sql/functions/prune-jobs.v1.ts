import { QueueSchema } from '../queue-schema';
import { FINISHED_STATUS, jobTypesSkipScanCte } from '../job-types-skip-scan.sql';

/**
 * The statement `prune_jobs()` runs, installed by AddJobRetention (1795939200003) and the only
 * version so far (frozen; see `current-functions.ts`). Exported so the plan test EXPLAINs
 * exactly this text.
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
export const pruneJobsQueryV1 = (schema: QueueSchema): string =>
  pruneJobsStatement(schema, 'pg_catalog.now()');

/**
 * The statement of `pruneJobsQueryV1`, with the time `completed_at` is counted back from as
 * `now` (V1: the statement's now(); V2: the queue's clock, `queueNowSql('$9')`). V1's text is
 * exactly the one AddJobRetention installed.
 */
export const pruneJobsStatement = (schema: QueueSchema, now: string): string => `
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS got
  ), ${jobTypesSkipScanCte(schema, FINISHED_STATUS, ' AND (SELECT lock.got FROM lock)')}, rules AS (
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
        AND j.completed_at < ${now} - rules.keep_ms * interval '1 millisecond'
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

/**
 * The CREATE FUNCTION of AddJobRetention, running `pruneJobsQueryV1`. A function, like the
 * claim, for its settings: JIT off (the planner's estimate grows with the table while the
 * statement reads a batch; past jit_above_cost it would compile the statement at every call),
 * and the pinned search_path. PinPrunePlan (1795939200007) later adds the claim's join settings
 * with ALTER FUNCTION; the body stays this one.
 */
export const createPruneJobsV1 = (schema: QueueSchema): string => `
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
  `;

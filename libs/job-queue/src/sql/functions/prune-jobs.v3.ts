import { QueueSchema } from '../queue-schema';
import { queueNowSql } from '../queue-now.sql';
import { FINISHED_STATUS, jobTypesSkipScanCte } from '../job-types-skip-scan.sql';
import { PRUNE_JOBS_V2_ARGUMENTS } from './prune-jobs.v2';
import { FINISHED_STATUSES } from './resolve-dependants.v1';

/**
 * The statement of the third `prune_jobs()` signature, installed by PrunePastKeptJobs
 * (1795939200020): V2's rules and clock, read as one walk in index order, type by type, status
 * by status (`cancelled`, `completed`, `failed`), each oldest first with the id breaking ties,
 * resumed after a cursor (`$10`-`$13`: the last row the previous page read, its `completed_at`
 * in microseconds since the epoch, exact where a client's Date is not; NULL: from the start). Each page reads up to `$8` rows and deletes those no unfinished job depends on; the rows
 * it keeps are counted, not deleted, and the next page starts after them. V2 stopped at a page
 * that came back short because the delete trigger kept rows, and read the same kept rows again
 * at every pass: behind a thousand of them it deleted nothing newer (issue 52).
 *
 * Returns one row: whether the lock was got, how many rows it deleted, kept (an unfinished job
 * depends on them) and read (a page that read fewer than `$8` reached the end), and the last row
 * read, the next page's cursor. Rows another transaction holds (`SKIP LOCKED`: a retry this
 * instant) are passed by, for the next pass. The cursor is the greatest row read: the walk's
 * nested loop takes the rules in their order, so that is the last one.
 */
export const pruneJobsQueryV3 = (schema: QueueSchema): string => `
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS got
  ), ${jobTypesSkipScanCte(schema, FINISHED_STATUS, ` AND (SELECT lock.got FROM lock) AND j.job_type >= COALESCE($10::text, '')`)}, rules AS (
    SELECT types.job_type, s.status,
           CASE WHEN $5::float8 IS NOT NULL THEN $5::float8
                WHEN t.retention_updated_at IS NULL THEN s.default_ms
                WHEN s.status = 'completed' THEN t.completed_retention_ms::float8
                WHEN s.status = 'failed' THEN t.failed_retention_ms::float8
                ELSE t.cancelled_retention_ms::float8 END AS keep_ms,
           COALESCE(types.job_type = $10::text AND s.status = $11::text, false) AS at_cursor,
           CASE WHEN types.job_type = $10::text AND s.status = $11::text
                THEN 'epoch'::timestamptz + $12::bigint * interval '1 microsecond'
                ELSE '-infinity'::timestamptz END AS after_at
    FROM types
      CROSS JOIN (VALUES ('cancelled'::text, $4::float8), ('completed'::text, $2::float8),
                         ('failed'::text, $3::float8)) AS s(status, default_ms)
      LEFT JOIN ${schema.jobTypes} t ON t.job_type = types.job_type
    WHERE types.job_type IS NOT NULL
      AND ($6::text[] IS NULL OR s.status = ANY ($6::text[]))
      AND ($7::text[] IS NULL OR types.job_type = ANY ($7::text[]))
      AND ($10::text IS NULL OR (types.job_type, s.status) >= ($10::text, $11::text))
    ORDER BY types.job_type, s.status
  ), page AS (
    SELECT rules.job_type, rules.status, old.id, old.completed_at, old.kept
    FROM rules CROSS JOIN LATERAL (
      SELECT j.id, j.completed_at,
             j.has_dependants AND EXISTS (
               SELECT 1 FROM ${schema.jobDependencies} e
                 JOIN ${schema.jobs} w ON w.id = e.job_id
               WHERE e.dependency_id = j.id AND w.status NOT IN (${FINISHED_STATUSES})) AS kept
      FROM ${schema.jobs} j
      WHERE j.status IN ('completed', 'failed', 'cancelled')
        AND j.job_type = rules.job_type AND j.status = rules.status
        AND j.completed_at < ${queueNowSql('$9')} - rules.keep_ms * interval '1 millisecond'
        AND j.completed_at >= rules.after_at
        AND (NOT rules.at_cursor OR (j.completed_at, j.id) > (rules.after_at, $13::bigint))
      ORDER BY j.completed_at, j.id
      LIMIT $8::integer
      FOR UPDATE OF j SKIP LOCKED
    ) AS old
    WHERE rules.keep_ms IS NOT NULL
    LIMIT $8::integer
  ), gone AS (
    DELETE FROM ${schema.jobs} AS j USING page
    WHERE j.id = page.id AND NOT page.kept AND j.status IN ('completed', 'failed', 'cancelled')
    RETURNING j.id
  ), last AS (
    SELECT page.job_type, page.status, page.completed_at, page.id FROM page
    ORDER BY page.job_type DESC, page.status DESC, page.completed_at DESC, page.id DESC
    LIMIT 1
  )
  SELECT (SELECT lock.got FROM lock) AS held,
         (SELECT pg_catalog.count(*)::integer FROM gone) AS deleted,
         (SELECT pg_catalog.count(*) FILTER (WHERE page.kept)::integer FROM page) AS kept,
         (SELECT pg_catalog.count(*)::integer FROM page) AS read,
         last.job_type AS last_type, last.status AS last_status,
         (EXTRACT(epoch FROM last.completed_at) * 1000000)::bigint AS last_us,
         last.id AS last_id
  FROM (SELECT) AS one LEFT JOIN last ON true`;

/** The third signature's argument types: the second one's and the cursor. */
export const PRUNE_JOBS_V3_ARGUMENTS = `${PRUNE_JOBS_V2_ARGUMENTS}, text, text, bigint, bigint`;

/**
 * The CREATE FUNCTION of PrunePastKeptJobs: a signature beside the second one (the previous
 * release's pruners still call that one), with its settings: JIT off, nested loops only, no
 * bitmap scans (see PinPrunePlan). No parameter has a default, so no call can match both.
 */
export const createPruneJobsV3 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.quoted}.prune_jobs(
      p_lock_key bigint,
      p_completed_ms float8,
      p_failed_ms float8,
      p_cancelled_ms float8,
      p_older_than_ms float8,
      p_statuses text[],
      p_types text[],
      p_limit integer,
      p_now timestamptz,
      p_after_type text,
      p_after_status text,
      p_after_us bigint,
      p_after_id bigint
    ) RETURNS TABLE (held boolean, deleted integer, kept integer, read integer, last_type text,
                     last_status text, last_us bigint, last_id bigint) LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET jit = off
      SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off
    AS $fn$
    BEGIN
      RETURN QUERY ${pruneJobsQueryV3(schema)};
    END
    $fn$
  `;

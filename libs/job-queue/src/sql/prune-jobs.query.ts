import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { ResolvedRetention } from '../retention.options';

/** Most jobs one statement deletes: a big backlog of old jobs goes in bounded steps. */
export const PRUNE_BATCH_SIZE = 1_000;

/** What one prune statement deletes. */
export interface PruneCriteria {
  /** For job types without a stored retention (`job_types.retention_updated_at` NULL). */
  defaults: ResolvedRetention;
  /** Delete finished jobs older than this whatever their type's retention; null: by retention. */
  olderThanMs: number | null;
  /** Only these finished statuses; null: all three. */
  statuses: readonly string[] | null;
  /** Only these job types; null: every type. */
  types: readonly string[] | null;
}

export interface PruneResult {
  /** False when another session held the lock: nothing was looked at. */
  held: boolean;
  deleted: number;
}

/**
 * Exported so the plan test EXPLAINs exactly this text.
 *
 * Shape: `types` lists the job types that have finished jobs by skipping through
 * `jobs_finished_idx` (one descent per type, not a read of every row); `rules` gives each type
 * and finished status its retention: the one a worker stored in `job_types`, else the module
 * default passed in, or `$5` for an operator's `olderThanMs`; `doomed` reads each rule's oldest
 * rows past it through the same index, `LIMIT` rows at most in all, and locks them
 * (`SKIP LOCKED`: a job being retried this instant is skipped; the status is checked again on
 * the locked row, so an unfinished job is never deleted).
 */
export const PRUNE_JOBS = (schema: QueueSchema): string => `
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS held
  ), types AS (
    (SELECT j.job_type FROM ${schema.jobs} j
     WHERE j.status IN ('completed', 'failed', 'cancelled') AND (SELECT lock.held FROM lock)
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
  ), deleted AS (
    DELETE FROM ${schema.jobs} AS j USING doomed
    WHERE j.id = doomed.id AND j.status IN ('completed', 'failed', 'cancelled')
    RETURNING j.id
  )
  SELECT (SELECT lock.held FROM lock) AS held, pg_catalog.count(*)::integer AS deleted
  FROM deleted`;

/**
 * Deletes up to `limit` finished jobs whose `completed_at` is older than their retention (see
 * `PRUNE_JOBS`), oldest first within each type and status. With `lockKey`, only if this
 * statement gets that transaction-scoped advisory lock (`held` false otherwise): one node prunes
 * a schema at a time, and as one autocommit statement the lock lasts exactly as long as it.
 */
export async function pruneJobs(
  db: Queryable,
  schemaName: string,
  lockKey: string | null,
  criteria: PruneCriteria,
  limit = PRUNE_BATCH_SIZE,
): Promise<PruneResult> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<PruneResult>(db, schema.statement(PRUNE_JOBS), [
    lockKey,
    criteria.defaults.completedMs,
    criteria.defaults.failedMs,
    criteria.defaults.cancelledMs,
    criteria.olderThanMs,
    criteria.statuses,
    criteria.types,
    limit,
  ]);
  return row;
}

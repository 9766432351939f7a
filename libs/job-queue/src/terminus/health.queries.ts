import { Queryable, queryRows } from '../sql/queryable';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { FINISHED_STATUS, jobTypesSkipScanCte } from '../sql/job-types-skip-scan.sql';

/** `jobs_claim_idx`'s predicate. */
const PENDING_STATUS = `j.status = 'pending'`;

/**
 * How long the next job in line of each type (the head of its claim order, `jobs_claim_idx`) has
 * been due, the longest of them, in ms; null when nothing is pending. Types are found by skipping
 * through the same index (one descent per type, as `prune_jobs` does), paused types left out:
 * a few index descents per type, whatever the backlog.
 */
const LONGEST_DUE_WAIT = (schema: QueueSchema): string => `
  WITH RECURSIVE ${jobTypesSkipScanCte(schema, PENDING_STATUS)}
  SELECT pg_catalog.max(pg_catalog.date_part('epoch', pg_catalog.now() - head.run_at))
           * 1000::float8 AS wait_ms
  FROM types CROSS JOIN LATERAL (
    SELECT j.run_at FROM ${schema.jobs} j
    WHERE j.status = 'pending' AND j.job_type = types.job_type
    ORDER BY j.priority DESC, j.created_at, j.id LIMIT 1
  ) AS head
  WHERE types.job_type IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ${schema.jobTypes} t
                    WHERE t.job_type = types.job_type AND t.paused_at IS NOT NULL)`;

/**
 * Jobs failed for good since `$1` (completed_at), counted up to `$2` rows per type: each type's
 * recent failures are read through `jobs_finished_idx` (job_type, status, completed_at), the
 * types found by skipping through it.
 */
const FAILED_SINCE = (schema: QueueSchema): string => `
  WITH RECURSIVE ${jobTypesSkipScanCte(schema, FINISHED_STATUS)}
  SELECT pg_catalog.count(*)::integer AS failed
  FROM types CROSS JOIN LATERAL (
    SELECT 1 FROM ${schema.jobs} j
    WHERE j.status IN ('completed', 'failed', 'cancelled')
      AND j.job_type = types.job_type AND j.status = 'failed' AND j.completed_at > $1::timestamptz
    LIMIT $2::integer
  ) AS recent
  WHERE types.job_type IS NOT NULL`;

/**
 * Whether a held job's lease is older than `$1` ms, as the reaper judges it: a row without a
 * heartbeat ages from its claim. Both reads go through `jobs_lease_idx` (heartbeat_at, NULLs
 * included), stopping at the first row found; the reaper's COALESCE would read every held row.
 */
const STALE_EXISTS = (schema: QueueSchema): string => `
  SELECT EXISTS (
    SELECT 1 FROM ${schema.jobs} j
    WHERE j.status IN ('claimed', 'running')
      AND j.heartbeat_at < pg_catalog.now() - $1::float8 * interval '1 millisecond'
  ) OR EXISTS (
    SELECT 1 FROM ${schema.jobs} j
    WHERE j.status IN ('claimed', 'running') AND j.heartbeat_at IS NULL
      AND COALESCE(j.claimed_at, j.updated_at)
            < pg_catalog.now() - $1::float8 * interval '1 millisecond'
  ) AS stale`;

export async function longestDueWaitMs(db: Queryable, schema: string): Promise<number | null> {
  const [row] = await queryRows<{ wait_ms: number | null }>(
    db,
    queueSchema(schema).statement(LONGEST_DUE_WAIT),
    [],
  );
  return row.wait_ms;
}

/** Jobs failed for good since `since`, counted up to `atMost` (per type). */
export async function failedSince(
  db: Queryable,
  schema: string,
  since: Date,
  atMost: number,
): Promise<number> {
  const [row] = await queryRows<{ failed: number }>(
    db,
    queueSchema(schema).statement(FAILED_SINCE),
    [since, atMost],
  );
  return row.failed;
}

export async function staleJobsExist(
  db: Queryable,
  schema: string,
  staleAfterMs: number,
): Promise<boolean> {
  const [row] = await queryRows<{ stale: boolean }>(
    db,
    queueSchema(schema).statement(STALE_EXISTS),
    [staleAfterMs],
  );
  return row.stale;
}

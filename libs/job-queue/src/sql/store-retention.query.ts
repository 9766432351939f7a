import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { ResolvedRetention } from '../options/resolved-options';

export interface TypeRetention {
  jobType: string;
  retention: ResolvedRetention;
}

// Only the retention columns: other per-type settings on the row (paused_at) are left alone. A
// row that already holds these values is not written again.
const STORE_RETENTION = (schema: QueueSchema): string => `
  INSERT INTO ${schema.jobTypes} AS t
    (job_type, completed_retention_ms, failed_retention_ms, cancelled_retention_ms,
     retention_updated_at)
  SELECT r.job_type, r.completed_ms, r.failed_ms, r.cancelled_ms, pg_catalog.now()
  FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::bigint[]),
                  pg_catalog.unnest($3::bigint[]), pg_catalog.unnest($4::bigint[]))
    AS r(job_type, completed_ms, failed_ms, cancelled_ms)
  ON CONFLICT (job_type) DO UPDATE SET
    completed_retention_ms = EXCLUDED.completed_retention_ms,
    failed_retention_ms = EXCLUDED.failed_retention_ms,
    cancelled_retention_ms = EXCLUDED.cancelled_retention_ms,
    retention_updated_at = EXCLUDED.retention_updated_at,
    updated_at = pg_catalog.now()
  WHERE t.retention_updated_at IS NULL
     OR t.completed_retention_ms IS DISTINCT FROM EXCLUDED.completed_retention_ms
     OR t.failed_retention_ms IS DISTINCT FROM EXCLUDED.failed_retention_ms
     OR t.cancelled_retention_ms IS DISTINCT FROM EXCLUDED.cancelled_retention_ms`;

/**
 * Stores each type's retention in `job_types` (one statement for all), where every node's
 * pruner reads it: the last worker to start with a handler for a type decides its retention.
 */
export async function storeRetention(
  db: Queryable,
  schemaName: string,
  types: readonly TypeRetention[],
): Promise<void> {
  if (types.length === 0) return;
  await queryRows(db, queueSchema(schemaName).statement(STORE_RETENTION), [
    types.map((t) => t.jobType),
    types.map((t) => t.retention.completedMs),
    types.map((t) => t.retention.failedMs),
    types.map((t) => t.retention.cancelledMs),
  ]);
}

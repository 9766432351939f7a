import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const RETRY_JOB = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET
    status = 'pending', attempts = 0, run_at = pg_catalog.now(), worker_id = NULL,
    claimed_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL,
    updated_at = pg_catalog.now()
  WHERE j.id = $1::bigint AND j.status IN ('failed', 'cancelled')
    AND NOT EXISTS (
      SELECT 1 FROM ${schema.jobs} holder
      WHERE holder.unique_key = j.unique_key
        AND holder.status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting'))
  RETURNING *`;

/**
 * Puts a failed or cancelled job back to `pending` with a fresh set of attempts, to run now.
 * Returns nothing when no such job exists, or when its `unique_key` is now held by another
 * unfinished job, `waiting` included (the unique index refuses; the caller reports the conflict).
 */
export async function retryJobRow(
  db: Queryable,
  schema: string,
  id: string,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, queueSchema(schema).statement(RETRY_JOB), [id]);
  return row;
}

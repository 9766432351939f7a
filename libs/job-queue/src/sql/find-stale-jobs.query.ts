import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const FIND_STALE_JOBS = (schema: QueueSchema): string => `
  SELECT * FROM ${schema.jobs}
  WHERE status IN ('claimed', 'running')
    AND updated_at < pg_catalog.now() - $1::float8 * interval '1 millisecond'
  ORDER BY updated_at, id`;

/**
 * Jobs held (claimed or running) whose row has not changed for `olderThanMs`: no progress, no
 * state change since at least then (a claim sets `updated_at`, so they were claimed before it too).
 * Heartbeats do not count as a change, so a hung handler on a live worker shows up as well.
 * The seed's "claimed for more than 10 minutes and not changed" question.
 */
export function findStaleJobRows(
  db: Queryable,
  schema: string,
  olderThanMs: number,
): Promise<JobRow[]> {
  return queryRows(db, queueSchema(schema).statement(FIND_STALE_JOBS), [olderThanMs]);
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { uniqueKeyCountsSql } from './unique-keys.sql';

/** The most failed jobs one statement of `redriveJobs` moves. */
export const REDRIVE_BATCH_SIZE = 1_000;

// One batch: the next failed jobs after the cursor `$1` (by id) that match the filters, locked
// (SKIP LOCKED: a job a concurrent redrive or retry holds is that one's), then back to `pending`
// with a fresh set of attempts, as `retry` does. A job whose unique key another job holds (in any
// status the key counts in, as the unique index reads it) stays failed, and so does every
// candidate after the first of one batch that share a key: moving both would break the index.
const REDRIVE_JOBS = (schema: QueueSchema): string => `
  WITH candidates AS (
    SELECT c.id, c.unique_key FROM ${schema.jobs} AS c
    WHERE c.status = 'failed' AND c.id > $1::bigint
      AND ($2::text IS NULL OR c.job_type = $2::text)
      AND ($3::timestamptz IS NULL OR c.completed_at >= $3::timestamptz)
      AND ($4::bigint[] IS NULL OR c.id = ANY ($4::bigint[]))
    ORDER BY c.id
    LIMIT $5::int
    FOR UPDATE SKIP LOCKED
  ), movable AS (
    SELECT m.id FROM candidates AS m
    WHERE m.unique_key IS NULL
       OR (NOT EXISTS (
             SELECT 1 FROM ${schema.jobs} AS j
             WHERE j.unique_key = m.unique_key AND j.id <> m.id
               AND ${uniqueKeyCountsSql(schema, 'j.')})
           AND NOT EXISTS (
             SELECT 1 FROM candidates AS earlier
             WHERE earlier.unique_key = m.unique_key AND earlier.id < m.id))
  ), moved AS (
    UPDATE ${schema.jobs} AS r SET
      status = 'pending', attempts = 0, run_at = pg_catalog.now(), worker_id = NULL,
      claimed_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL,
      updated_at = pg_catalog.now()
    FROM movable WHERE r.id = movable.id AND r.status = 'failed'
    RETURNING r.id
  )
  SELECT (SELECT pg_catalog.max(candidates.id) FROM candidates)::text AS last_id,
         (SELECT pg_catalog.count(*) FROM moved)::int AS moved,
         (SELECT pg_catalog.count(*) FROM candidates)::int AS seen`;

export interface RedriveCriteria {
  type: string | null;
  since: Date | null;
  ids: string[] | null;
}

export interface RedriveBatch {
  /** The id the next batch starts after; null when this one saw no job. */
  lastId: string | null;
  /** How many jobs this batch moved back to `pending`. */
  moved: number;
  /** How many failed jobs it looked at (moved or left for their key). */
  seen: number;
}

/** One statement of a redrive: the next batch of failed jobs after `afterId` back to `pending`. */
export async function redriveJobs(
  db: Queryable,
  schema: string,
  afterId: string,
  criteria: RedriveCriteria,
  limit: number = REDRIVE_BATCH_SIZE,
): Promise<RedriveBatch> {
  const [row] = await queryRows<{ last_id: string | null; moved: number; seen: number }>(
    db,
    queueSchema(schema).statement(REDRIVE_JOBS),
    [afterId, criteria.type, criteria.since, criteria.ids, limit],
  );
  return { lastId: row.last_id, moved: row.moved, seen: row.seen };
}

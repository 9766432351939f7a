import { Queryable, queryRows } from './queryable';
import { PENDING_AGAIN_PAYLOAD, QueueSchema, queueSchema } from './queue-schema';
import { queueNowSql } from './queue-now.sql';

/** The queue's time, `$3` (null: the statement's now()), and how long a job may wait, `$2`. */
const CUTOFF = `${queueNowSql('$3')} - $2::float8 * interval '1 millisecond'`;

/**
 * The keys with waiting jobs, found by skipping through `jobs_key_waiting_idx` (one descent per
 * key, however many jobs wait on it), gated on the lock `$1`. A key is stuck when no job of it is
 * claimed or running (whose end would free a slot), no rate window of it (or of its type) opened
 * within the cutoff (a claim releases a window's keys once it opens), and one of its waiting jobs
 * has waited past the cutoff. Their waiting jobs go back to `pending`: the next claims set aside
 * again what the type's limits hold back, so no limit is broken by moving too many. Idle workers
 * are woken as the slot trigger wakes them.
 */
export const RELEASE_STUCK_JOBS = (schema: QueueSchema): string => `
  WITH RECURSIVE lock AS (
    SELECT pg_catalog.pg_try_advisory_xact_lock($1::bigint) AS got
  ), keys AS (
    (SELECT j.job_type, j.concurrency_key FROM ${schema.jobs} j
     WHERE j.status = 'waiting' AND j.concurrency_key IS NOT NULL AND (SELECT lock.got FROM lock)
     ORDER BY j.job_type, j.concurrency_key LIMIT 1)
    UNION ALL
    SELECT next.job_type, next.concurrency_key FROM keys CROSS JOIN LATERAL (
      SELECT j.job_type, j.concurrency_key FROM ${schema.jobs} j
      WHERE j.status = 'waiting' AND j.concurrency_key IS NOT NULL
        AND (j.job_type, j.concurrency_key) > (keys.job_type, keys.concurrency_key)
      ORDER BY j.job_type, j.concurrency_key LIMIT 1
    ) AS next
  ), stuck AS (
    SELECT k.job_type, k.concurrency_key FROM keys k
    WHERE NOT EXISTS (
        SELECT 1 FROM ${schema.jobs} h
        WHERE h.job_type = k.job_type AND h.concurrency_key = k.concurrency_key
          AND h.status IN ('claimed', 'running'))
      AND NOT EXISTS (
        SELECT 1 FROM ${schema.jobRateBlocked} r
        WHERE r.job_type = k.job_type AND r.rate_key IN (k.concurrency_key, '')
          AND r.opens_at > ${CUTOFF})
      AND EXISTS (
        SELECT 1 FROM ${schema.jobs} w
        WHERE w.job_type = k.job_type AND w.concurrency_key = k.concurrency_key
          AND w.status = 'waiting' AND w.updated_at < ${CUTOFF})
  ), moved AS (
    UPDATE ${schema.jobs} AS j SET status = 'pending', updated_at = ${queueNowSql('$3')}
    FROM stuck
    WHERE j.job_type = stuck.job_type AND j.concurrency_key = stuck.concurrency_key
      AND j.status = 'waiting'
    RETURNING j.id, j.job_type
  ), counted AS (
    SELECT m.job_type, pg_catalog.count(*)::integer AS moved, pg_catalog.min(m.id)::text AS oldest
    FROM moved m GROUP BY m.job_type
  )
  SELECT counted.job_type, counted.moved, counted.oldest FROM counted
    LEFT JOIN LATERAL (SELECT pg_catalog.pg_notify($4::text, $5::text)) AS notified ON true
  ORDER BY counted.job_type`;

/** A type whose stuck waiting jobs a pass moved back to `pending`. */
export interface ReleasedStuckJobs {
  jobType: string;
  moved: number;
  /** The smallest id among them, for the log line. */
  oldestId: string;
}

/**
 * One pass: moves the waiting jobs of every stuck key (see `RELEASE_STUCK_JOBS`) back to
 * `pending`, if this statement gets the schema's `stuck` advisory lock (one node at a time), at
 * the queue's time `now` (null: the database's). Returns what it moved, by type.
 */
export async function releaseStuckJobs(
  db: Queryable,
  schemaName: string,
  stuckAfterMs: number,
  now: Date | null = null,
): Promise<ReleasedStuckJobs[]> {
  const schema = queueSchema(schemaName);
  const rows = await queryRows<{ job_type: string; moved: number; oldest: string }>(
    db,
    schema.statement(RELEASE_STUCK_JOBS),
    [schema.lockKey('stuck'), stuckAfterMs, now, schema.insertedChannel, PENDING_AGAIN_PAYLOAD],
  );
  return rows.map((row) => ({ jobType: row.job_type, moved: row.moved, oldestId: row.oldest }));
}

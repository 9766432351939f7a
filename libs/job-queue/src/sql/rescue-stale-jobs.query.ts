import { Queryable, queryRows } from './queryable';

/** Key of the advisory lock that lets one reaper at a time run (any 64-bit constant). */
export const REAPER_ADVISORY_LOCK_KEY = 7_316_485_210_934;

export interface RescuedJobRow {
  id: string;
  job_type: string;
  status: string;
  worker_id: string | null;
}

/**
 * Takes back jobs whose lease (`heartbeat_at`) is older than `staleAfterMs`: to `pending` (run
 * now), or to `failed` when the attempt that died was the last one. The limit is the job's own
 * `max_attempts`, else its handler's (`typeLimits`), else `defaultMaxAttempts`.
 * Runs only if it gets the transaction-scoped advisory lock, so one node reaps at a time;
 * as one autocommit statement, the lock is held exactly as long as the update.
 */
export function rescueStaleJobs(
  db: Queryable,
  staleAfterMs: number,
  typeLimits: ReadonlyMap<string, number>,
  defaultMaxAttempts: number,
): Promise<RescuedJobRow[]> {
  return queryRows<RescuedJobRow>(
    db,
    `WITH lock AS (SELECT pg_try_advisory_xact_lock($1) AS held),
     limits AS (SELECT * FROM unnest($3::varchar[], $4::integer[]) AS l(job_type, max_attempts)),
     stale AS (
       SELECT j.id, j.worker_id,
              j.attempts >= COALESCE(j.max_attempts, l.max_attempts, $5) AS exhausted
       FROM jobs j LEFT JOIN limits l ON l.job_type = j.job_type
       WHERE (SELECT held FROM lock)
         AND j.status IN ('claimed', 'running')
         -- A held row without a heartbeat (edited by hand, or written by an older tool) ages from
         -- its claim instead of staying held forever.
         AND COALESCE(j.heartbeat_at, j.claimed_at, j.updated_at) < now() - $2 * interval '1 millisecond'
       FOR UPDATE OF j SKIP LOCKED
     )
     UPDATE jobs AS j SET
       status = CASE WHEN stale.exhausted THEN 'failed' ELSE 'pending' END,
       last_error = 'Worker ' || COALESCE(stale.worker_id, '?') || ' stopped heartbeating during attempt '
                    || j.attempts || CASE WHEN stale.exhausted THEN ', the last one' ELSE '' END,
       completed_at = CASE WHEN stale.exhausted THEN now() ELSE NULL END,
       worker_id = NULL, heartbeat_at = NULL, run_at = now(), updated_at = now()
     FROM stale WHERE j.id = stale.id
     RETURNING j.id, j.job_type, j.status, stale.worker_id`,
    [
      REAPER_ADVISORY_LOCK_KEY,
      staleAfterMs,
      [...typeLimits.keys()],
      [...typeLimits.values()],
      defaultMaxAttempts,
    ],
  );
}

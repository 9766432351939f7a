import { Queryable, queryRows } from './queryable';

/** Key of the advisory lock that lets one reaper at a time run (any 64-bit constant). */
export const REAPER_ADVISORY_LOCK_KEY = 7_316_485_210_934;

export interface RescuedJobRow {
  id: string;
  job_type: string;
  status: string;
  worker_id: string | null;
  /** When it may run again (pending), or when it failed. */
  run_at: Date;
}

/** What applies to a row that has no policy of its own (never claimed by a worker of ours). */
export interface FallbackPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

/**
 * Takes back jobs whose lease (`heartbeat_at`) is older than `staleAfterMs`: to `failed` when the
 * attempt that died was the last one, else to `pending`, to run again after its backoff like any
 * failed attempt. The limit and the backoff are the row's own (`max_attempts`, `backoff_*`: fixed
 * at enqueue or by the job's first claim), so whichever node reaps decides as the node that ran
 * it would have; `fallback` only covers a row claimed without them (by hand, or by a claim of the
 * seed's three arguments).
 *
 * The delay is the formula of `retryDelayMs` (worker/retry-policy.ts), in SQL:
 * min(max, base * 2^(attempts - 1)), then moved by up to ±jitter of itself at random.
 *
 * Runs only if it gets the transaction-scoped advisory lock, so one node reaps at a time;
 * as one autocommit statement, the lock is held exactly as long as the update.
 */
export function rescueStaleJobs(
  db: Queryable,
  staleAfterMs: number,
  fallback: FallbackPolicy,
): Promise<RescuedJobRow[]> {
  return queryRows<RescuedJobRow>(
    db,
    `WITH lock AS (SELECT pg_try_advisory_xact_lock($1) AS held),
     stale AS (
       SELECT j.id, j.worker_id,
              j.attempts >= COALESCE(j.max_attempts, $3) AS exhausted,
              LEAST(COALESCE(j.backoff_max_ms, $5)::float8,
                    COALESCE(j.backoff_base_ms, $4)
                      * power(2::float8, LEAST(GREATEST(j.attempts - 1, 0), 64))) AS capped_ms,
              COALESCE(j.backoff_jitter, $6::float8) AS jitter
       FROM jobs j
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
       run_at = CASE WHEN stale.exhausted THEN now()
                     ELSE now() + GREATEST(0, round(stale.capped_ms
                                  * (1 + stale.jitter * (2 * random() - 1))))
                                * interval '1 millisecond' END,
       worker_id = NULL, heartbeat_at = NULL, updated_at = now()
     FROM stale WHERE j.id = stale.id
     RETURNING j.id, j.job_type, j.status, stale.worker_id, j.run_at`,
    [
      REAPER_ADVISORY_LOCK_KEY,
      staleAfterMs,
      fallback.maxAttempts,
      fallback.baseDelayMs,
      fallback.maxDelayMs,
      fallback.jitter,
    ],
  );
}

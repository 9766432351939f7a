import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { notifyJobEventsCtes } from './job-events.notify';
import { queueNowSql } from './queue-now.sql';
import { claimedRowMissingSql, endedRunRowsSql, insertLogRowsCte } from './job-log-rows';

export interface RescuedJobRow {
  id: string;
  job_type: string;
  status: string;
  worker_id: string | null;
  /** When it may run again (scheduled, or pending when due at once), or when it failed. */
  run_at: Date;
  attempts: number;
  progress: number;
  current_stage: string | null;
}

/** What applies to a row that has no policy of its own (never claimed by a worker of ours). */
export interface FallbackPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

/** The queue's clock, `$7`: null (the statement's now()) unless the testing kit moved it. */
const QUEUE_NOW = queueNowSql('$7');

// Every operand is float8 where the arithmetic is, so each operator is pg_catalog's exact one.
const RESCUE_STALE_JOBS_WITH = (schema: QueueSchema): string => `
  WITH lock AS (SELECT pg_catalog.pg_try_advisory_xact_lock($1::bigint) AS held),
  stale AS (
    SELECT j.id, j.worker_id,
           j.attempts >= COALESCE(j.max_attempts, $3::integer) AS exhausted,
           LEAST(COALESCE(j.backoff_max_ms, $5::integer)::float8,
                 COALESCE(j.backoff_base_ms, $4::integer)::float8
                   * pg_catalog.power(2::float8,
                                      LEAST(GREATEST(j.attempts - 1, 0), 64)::float8)) AS capped_ms,
           COALESCE(j.backoff_jitter, $6::float8) AS jitter,
           ${claimedRowMissingSql(schema)} AS claimed_missing
    FROM ${schema.jobs} j
    WHERE (SELECT held FROM lock)
      AND j.status IN ('claimed', 'running')
      -- A held row without a heartbeat (edited by hand, or written by an older tool) ages from
      -- its claim instead of staying held forever.
      AND COALESCE(j.heartbeat_at, j.claimed_at, j.updated_at)
            < ${QUEUE_NOW} - $2::float8 * interval '1 millisecond'
    FOR UPDATE OF j SKIP LOCKED
  ), delayed AS (
    SELECT stale.*,
           GREATEST(0::float8, pg_catalog.round(stale.capped_ms
             * (1::float8 + stale.jitter * (2::float8 * pg_catalog.random() - 1::float8))))
             AS delay_ms
    FROM stale
  ), rescued AS (
  UPDATE ${schema.jobs} AS j SET
    status = CASE WHEN stale.exhausted THEN 'failed'
                  WHEN stale.delay_ms > 0::float8 THEN 'scheduled' ELSE 'pending' END,
    last_error = 'Worker ' || COALESCE(stale.worker_id, '?')
                 || ' stopped heartbeating during attempt ' || j.attempts::text
                 || CASE WHEN stale.exhausted THEN ', the last one' ELSE '' END,
    completed_at = CASE WHEN stale.exhausted THEN ${QUEUE_NOW} ELSE NULL END,
    run_at = CASE WHEN stale.exhausted THEN ${QUEUE_NOW}
                  ELSE ${QUEUE_NOW} + stale.delay_ms * interval '1 millisecond' END,
    worker_id = NULL, heartbeat_at = NULL,
    events_count = j.events_count + 1 + CASE WHEN stale.claimed_missing THEN 1 ELSE 0 END,
    updated_at = ${QUEUE_NOW}
  FROM delayed AS stale WHERE j.id = stale.id
  RETURNING j.id, j.job_type, j.status, stale.worker_id, j.run_at, j.attempts, j.progress,
    j.current_stage, 'rescued'::text AS event, j.run_token, j.claimed_at, j.last_error,
    stale.claimed_missing
  ), ${insertLogRowsCte(schema, endedRunRowsSql('rescued', 'rescued', 'x.last_error'))}`;

const RESCUE_STALE_JOBS = (schema: QueueSchema): string => `${RESCUE_STALE_JOBS_WITH(schema)}
  SELECT id, job_type, status, worker_id, run_at, attempts, progress, current_stage FROM rescued`;

const RESCUE_EVENTS = notifyJobEventsCtes('rescued', '$8::text', '$9::text');

/**
 * The rescue that also notifies a `rescued` event of each job it takes back (`events.remote`);
 * the LEFT JOIN reads `events_notified` whatever was rescued (a row of nulls when nothing was,
 * dropped by `rescueStaleJobs`).
 */
const RESCUE_STALE_JOBS_AND_NOTIFY = (schema: QueueSchema): string =>
  `${RESCUE_STALE_JOBS_WITH(schema)}, ${RESCUE_EVENTS}
  SELECT rescued.id, job_type, status, worker_id, run_at, attempts, progress, current_stage
  FROM events_notified LEFT JOIN rescued ON true`;

/**
 * Takes back jobs whose lease (`heartbeat_at`) is older than `staleAfterMs` at the queue's now
 * (`now`; null: the statement's now()): to `failed` when the
 * attempt that died was the last one, else to `scheduled` (`pending` if the delay is 0), to run
 * again after its backoff like any failed attempt. The limit and the backoff are the row's own (`max_attempts`, `backoff_*`: fixed
 * at enqueue or by the job's first claim), so whichever node reaps decides as the node that ran
 * it would have; `fallback` only covers a row claimed without them (by hand, or by a claim of the
 * seed's three arguments).
 *
 * The delay is the formula of `retryDelayMs` (retry/retry-policy.ts), in SQL:
 * min(max, base * 2^(attempts - 1)), then moved by up to ±jitter of itself at random.
 *
 * With `notifyOrigin` (this process's workerId), the same statement sends a `rescued` event of
 * each job it takes back on the schema's events channel.
 *
 * Each job's log gets a `rescued` row saying why, after the dead run's `claimed` row if it wrote
 * none (see `endedRunRowsSql`).
 *
 * Runs only if it gets the schema's transaction-scoped advisory lock (`reaperLockKey`), so one
 * node reaps a schema at a time; as one autocommit statement, the lock is held exactly as long
 * as the update.
 */
export async function rescueStaleJobs(
  db: Queryable,
  schema: string,
  staleAfterMs: number,
  fallback: FallbackPolicy,
  notifyOrigin?: string,
  now: Date | null = null,
): Promise<RescuedJobRow[]> {
  const queue = queueSchema(schema);
  const parameters: unknown[] = [
    queue.reaperLockKey,
    staleAfterMs,
    fallback.maxAttempts,
    fallback.baseDelayMs,
    fallback.maxDelayMs,
    fallback.jitter,
    now,
  ];
  if (notifyOrigin === undefined) {
    return queryRows<RescuedJobRow>(db, queue.statement(RESCUE_STALE_JOBS), parameters);
  }
  parameters.push(queue.eventsChannel, notifyOrigin);
  const rows = await queryRows<RescuedJobRow>(
    db,
    queue.statement(RESCUE_STALE_JOBS_AND_NOTIFY),
    parameters,
  );
  return rows.filter((row) => row.id !== null);
}

import { DataSource } from 'typeorm';
import { ResolvedConcurrencyLimits, ResolvedRateLimit } from '../options/resolved-options';
import { Queryable, queryRows } from './queryable';
import { PENDING_AGAIN_PAYLOAD, QueueSchema, queueSchema } from './queue-schema';

export interface TypeConcurrencyLimits {
  jobType: string;
  limits: ResolvedConcurrencyLimits;
}

/** A type whose stored limits a worker's start wrote. */
export interface ConcurrencyLimitsChange {
  jobType: string;
  /** What `job_types` held before; `null`: no limits were ever stored for the type. */
  previous: ResolvedConcurrencyLimits | null;
  current: ResolvedConcurrencyLimits;
  /** The type's `waiting` jobs moved back to `pending` (its per-key limits changed). */
  releasedWaiting: number;
}

// Only the limits' columns: other per-type settings on the row (paused_at, retention) are left
// alone. A row that already holds these values is not written again. `old` reads (and locks, in
// the order of the names, as every boot does) the rows before the upsert: each type's joined row
// is read before it is written, and the same command could not lock a row it had written. A row
// another boot inserts meanwhile is not in `old`: the upsert's own WHERE decides on it.
const STORE_CONCURRENCY_LIMITS = (schema: QueueSchema): string => `
  WITH given AS (
    SELECT g.job_type, g.per_key, g.global_limit, g.ordered, g.rate_max, g.rate_per_ms,
           g.rate_by_key
    FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::integer[]),
                    pg_catalog.unnest($3::integer[]), pg_catalog.unnest($4::boolean[]),
                    pg_catalog.unnest($5::integer[]), pg_catalog.unnest($6::integer[]),
                    pg_catalog.unnest($7::boolean[]))
      AS g(job_type, per_key, global_limit, ordered, rate_max, rate_per_ms, rate_by_key)
  ), old AS (
    SELECT t.job_type, t.concurrency_per_key, t.global_concurrency, t.ordered_keys,
           t.rate_max, t.rate_per_ms, t.rate_by_key, t.limits_updated_at
    FROM ${schema.jobTypes} t
    WHERE t.job_type = ANY ($1::text[])
    ORDER BY t.job_type
    FOR UPDATE
  ), stored AS (
    INSERT INTO ${schema.jobTypes} AS t
      (job_type, concurrency_per_key, global_concurrency, ordered_keys, rate_max, rate_per_ms,
       rate_by_key, limits_updated_at)
    SELECT g.job_type, g.per_key, g.global_limit, g.ordered, g.rate_max, g.rate_per_ms,
           g.rate_by_key, pg_catalog.now()
    FROM given g LEFT JOIN old o ON o.job_type = g.job_type
    WHERE o.limits_updated_at IS NULL
       OR o.concurrency_per_key IS DISTINCT FROM g.per_key
       OR o.global_concurrency IS DISTINCT FROM g.global_limit
       OR o.ordered_keys IS DISTINCT FROM g.ordered
       OR o.rate_max IS DISTINCT FROM g.rate_max
       OR o.rate_per_ms IS DISTINCT FROM g.rate_per_ms
       OR o.rate_by_key IS DISTINCT FROM g.rate_by_key
    ON CONFLICT (job_type) DO UPDATE SET
      concurrency_per_key = EXCLUDED.concurrency_per_key,
      global_concurrency = EXCLUDED.global_concurrency,
      ordered_keys = EXCLUDED.ordered_keys,
      rate_max = EXCLUDED.rate_max,
      rate_per_ms = EXCLUDED.rate_per_ms,
      rate_by_key = EXCLUDED.rate_by_key,
      limits_updated_at = EXCLUDED.limits_updated_at,
      updated_at = pg_catalog.now()
    WHERE t.limits_updated_at IS NULL
       OR t.concurrency_per_key IS DISTINCT FROM EXCLUDED.concurrency_per_key
       OR t.global_concurrency IS DISTINCT FROM EXCLUDED.global_concurrency
       OR t.ordered_keys IS DISTINCT FROM EXCLUDED.ordered_keys
       OR t.rate_max IS DISTINCT FROM EXCLUDED.rate_max
       OR t.rate_per_ms IS DISTINCT FROM EXCLUDED.rate_per_ms
       OR t.rate_by_key IS DISTINCT FROM EXCLUDED.rate_by_key
    RETURNING t.job_type, t.concurrency_per_key, t.global_concurrency, t.ordered_keys,
              t.rate_max, t.rate_per_ms, t.rate_by_key
  )
  SELECT s.job_type, o.limits_updated_at IS NOT NULL AS was_stored,
         o.concurrency_per_key AS old_per_key, o.global_concurrency AS old_global_limit,
         o.ordered_keys AS old_ordered, o.rate_max AS old_rate_max,
         o.rate_per_ms AS old_rate_per_ms, o.rate_by_key AS old_rate_by_key,
         s.concurrency_per_key AS per_key, s.global_concurrency AS global_limit,
         s.ordered_keys AS ordered, s.rate_max, s.rate_per_ms, s.rate_by_key
  FROM stored s LEFT JOIN old o ON o.job_type = s.job_type
  ORDER BY s.job_type`;

// The lock a claim takes, in a statement of its own, for each limited type it reads (see
// `QueueSchema.claimLockClass`), in the same order of names, so neither waits for the other in a
// cycle. The subquery sorts before the locks are taken.
const LOCK_CLAIMS_OF_TYPES = `
  SELECT pg_catalog.pg_advisory_xact_lock($1::integer, pg_catalog.hashtext(t.job_type))
  FROM (SELECT u.job_type FROM pg_catalog.unnest($2::text[]) AS u(job_type)
        ORDER BY u.job_type) AS t`;

// Read through jobs_key_waiting_idx. Notifies like the stager: the moved jobs' place is behind
// where workers' claims resume (identical notifications of one transaction are delivered once).
const RELEASE_WAITING_JOBS = (schema: QueueSchema): string => `
  WITH moved AS (
    UPDATE ${schema.jobs} AS j SET status = 'pending', updated_at = pg_catalog.now()
    WHERE j.status = 'waiting' AND j.job_type = ANY ($1::text[])
    RETURNING j.job_type
  ), counted AS (
    SELECT m.job_type, pg_catalog.count(*)::integer AS moved FROM moved m GROUP BY m.job_type
  )
  SELECT counted.job_type, counted.moved FROM counted
    LEFT JOIN LATERAL (SELECT pg_catalog.pg_notify($2::text, $3::text)) AS notified ON true`;

interface StoredLimitsRow {
  job_type: string;
  was_stored: boolean;
  old_per_key: number | null;
  old_global_limit: number | null;
  old_ordered: boolean | null;
  old_rate_max: number | null;
  old_rate_per_ms: number | null;
  old_rate_by_key: boolean | null;
  per_key: number | null;
  global_limit: number | null;
  ordered: boolean;
  rate_max: number | null;
  rate_per_ms: number | null;
  rate_by_key: boolean;
}

/**
 * Stores each type's concurrency limits in `job_types` (one statement for all), where every
 * node's claim reads them: the last worker to start with a handler for a type decides its
 * limits. Returns the types whose row it wrote (their limits differed, or none were stored yet),
 * with what the row held before.
 *
 * A type whose limits change, when the old ones set jobs aside (`concurrency_per_key`, or a rate
 * limit `rate_by_key`), has its `waiting` jobs moved back to `pending` in the same transaction, and
 * the next claims set aside again what the new limits hold back. A job set aside under the old
 * limits waits for a release the new ones may never make: the slot trigger does nothing once
 * `concurrency_per_key` is gone, and a claim releases only keys with a rate window, so a key's
 * jobs waiting for a slot would stay `waiting` under a rate by key alone (issue 52). Any change
 * releases them, not only a removal, so no pair of old and new limits is left to reason about.
 * It first takes the claims' lock of those types: a claim that read the old limits and is setting
 * jobs aside commits before the move, and the move's statement, with a snapshot taken after, sees
 * its jobs; every later claim reads the new limits. Only then, at a boot that changes such a
 * type's limits, does the store cost more than one statement (and BEGIN, COMMIT).
 */
export async function storeConcurrencyLimits(
  dataSource: DataSource,
  schemaName: string,
  types: readonly TypeConcurrencyLimits[],
): Promise<ConcurrencyLimitsChange[]> {
  if (types.length === 0) return [];
  const schema = queueSchema(schemaName);
  return dataSource.transaction(async (manager) => {
    const rows = await queryRows<StoredLimitsRow>(
      manager,
      schema.statement(STORE_CONCURRENCY_LIMITS),
      [
        types.map((t) => t.jobType),
        types.map((t) => t.limits.concurrencyPerKey),
        types.map((t) => t.limits.globalConcurrency),
        types.map((t) => t.limits.ordered),
        types.map((t) => t.limits.rateLimit?.max ?? null),
        types.map((t) => t.limits.rateLimit?.perMs ?? null),
        types.map((t) => t.limits.rateLimit?.byKey ?? false),
      ],
    );
    const changes = rows.map(toChange);
    const setAsideBefore = changes
      .filter((c) => c.previous && setsJobsAside(c.previous))
      .map((c) => c.jobType);
    if (setAsideBefore.length > 0) {
      const released = await releaseWaitingJobs(manager, schema, setAsideBefore);
      for (const change of changes) change.releasedWaiting = released.get(change.jobType) ?? 0;
    }
    return changes;
  });
}

async function releaseWaitingJobs(
  db: Queryable,
  schema: QueueSchema,
  jobTypes: readonly string[],
): Promise<Map<string, number>> {
  await queryRows(db, LOCK_CLAIMS_OF_TYPES, [schema.claimLockClass, jobTypes]);
  const rows = await queryRows<{ job_type: string; moved: number }>(
    db,
    schema.statement(RELEASE_WAITING_JOBS),
    [jobTypes, schema.insertedChannel, PENDING_AGAIN_PAYLOAD],
  );
  return new Map(rows.map((row) => [row.job_type, row.moved]));
}

/** Limits under which a claim sets a key's jobs aside as `waiting`: per-key ones. */
const setsJobsAside = (limits: ResolvedConcurrencyLimits): boolean =>
  limits.concurrencyPerKey !== null || limits.rateLimit?.byKey === true;

const rateLimitOf = (
  max: number | null,
  perMs: number | null,
  byKey: boolean | null,
): ResolvedRateLimit | null =>
  max === null || perMs === null ? null : { max, perMs, byKey: byKey === true };

function toChange(row: StoredLimitsRow): ConcurrencyLimitsChange {
  return {
    jobType: row.job_type,
    previous: row.was_stored
      ? {
          concurrencyPerKey: row.old_per_key,
          globalConcurrency: row.old_global_limit,
          ordered: row.old_ordered === true,
          rateLimit: rateLimitOf(row.old_rate_max, row.old_rate_per_ms, row.old_rate_by_key),
        }
      : null,
    current: {
      concurrencyPerKey: row.per_key,
      globalConcurrency: row.global_limit,
      ordered: row.ordered,
      rateLimit: rateLimitOf(row.rate_max, row.rate_per_ms, row.rate_by_key),
    },
    releasedWaiting: 0,
  };
}

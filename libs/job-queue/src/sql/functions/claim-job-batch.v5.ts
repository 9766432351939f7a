import { QueueSchema } from '../queue-schema';
import {
  CLAIM_REQUESTED_TYPES,
  CLAIMED_RESULT,
  claimedUpdate,
  GROUP_REQUESTED_TYPES,
} from './claim-job-batch.parts';
import { notPaused } from './claim-job-batch.v2';
import { bestOfType, CURSOR_SEGMENTS, LOCK } from './claim-job-batch.v3';
import { SET_ASIDE_PER_KEY } from './claim-job-batch.v4';
import { keySlotHoldersSql } from './release-key-slot.v1';

/**
 * How long, beyond `rate_per_ms`, a start keeps its place in its window. The claim counts a
 * start at the moment it takes the job; the handler begins a little later (the commit, the reply,
 * the executor's dispatch), and by a different delay for each job. Without the margin, a job
 * claimed the instant an earlier one left the window, but dispatched sooner than that one was,
 * could begin less than `rate_per_ms` after it: a partner counting at its end would see one start
 * too many. Measured across three worker processes on a 2-core machine: 4 to 15 ms from claim to
 * the handler's first statement in steady state (test/e2e/rate-limits.multi-process.e2e-spec.ts).
 * The margin covers delays up to 50 ms; the rate is then `max` per `rate_per_ms + 50` ms at most
 * (5% under nominal for a one-second window, 0.08% for a minute).
 */
export const RATE_START_MARGIN_MS = 50;

/** The start of a window of `perMs` that ends at the claim's clock. */
export const rateWindowStart = (perMs: string): string =>
  `COALESCE($4, clock_timestamp()) - ((${perMs} + ${RATE_START_MARGIN_MS}) * interval '1 millisecond')`;

/** The starts `owner`'s type (or key: `rateKey`) made since `owner.window_start`. */
const startsInWindow = (schema: QueueSchema, owner: string, rateKey: string): string => `(
                  SELECT COALESCE(sum(s.starts), 0) FROM ${schema.jobRateStarts} s
                  WHERE s.job_type = ${owner}.job_type AND s.rate_key = ${rateKey}
                    AND s.started_at > ${owner}.window_start)`;

/** As V4's: a requested type's pending jobs from the head of its queue, due by the clock. */
const fromTheHead = (
  schema: QueueSchema,
  owner: string,
  columns: string,
  limit: string,
): string => `
      SELECT ${columns} FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = ${owner}.job_type
        AND j.run_at <= COALESCE($4, clock_timestamp())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT ${limit}`;

/**
 * V4's limits and windows, with the rate limits of `job_types`. A type's room is also cut to
 * what its rate window has left (`rate_max` less its starts since the window's start), unless
 * the rate counts per key (`rate_by_key`): such a type reads a window from its head, as a type
 * with a per-key concurrency limit does (`keyed`), and each keyed row counts its key's starts.
 */
const limitsAndWindows = (schema: QueueSchema): string => `  ), typed AS (
    SELECT types.job_type, lt.concurrency_per_key AS per_key,
           COALESCE(lt.ordered_keys, false) AS ordered,
           lt.rate_max, COALESCE(lt.rate_by_key, false) AS rate_by_key,
           ${rateWindowStart('COALESCE(lt.rate_per_ms, 0)')} AS window_start,
           (lt.concurrency_per_key IS NOT NULL OR COALESCE(lt.rate_by_key, false)) AS keyed,
           CASE WHEN lt.global_concurrency IS NULL THEN types.cap
                ELSE LEAST(types.cap, GREATEST(0, lt.global_concurrency - (
                  SELECT count(*) FROM ${schema.jobs} h
                  WHERE h.status IN ('claimed', 'running') AND h.job_type = types.job_type)))
           END AS free
    FROM types LEFT JOIN ${schema.jobTypes} lt ON lt.job_type = types.job_type
  ), limits AS (
    SELECT typed.*,
           CASE WHEN typed.rate_max IS NULL OR typed.rate_by_key THEN typed.free
                ELSE LEAST(typed.free, GREATEST(0, typed.rate_max - ${startsInWindow(schema, 'typed', "''")}))
           END AS room
    FROM typed
  ), window_rows AS (
    SELECT limits.job_type, limits.per_key, limits.ordered, limits.rate_max, limits.rate_by_key,
           limits.window_start, w.id, w.priority, w.created_at, w.concurrency_key,
           row_number() OVER (PARTITION BY limits.job_type, w.concurrency_key
                              ORDER BY w.priority DESC, w.created_at ASC, w.id ASC) AS key_rank
    FROM limits CROSS JOIN LATERAL (${fromTheHead(
      schema,
      'limits',
      'j.id, j.priority, j.created_at, j.concurrency_key',
      'limits.room + LEAST(limits.room, 16)',
    )}
    ) AS w
    WHERE limits.keyed AND limits.room > 0
  ), window_slots AS (
    SELECT window_rows.*,
           CASE WHEN window_rows.concurrency_key IS NULL OR window_rows.per_key IS NULL THEN 0
                ELSE (SELECT count(*) FROM (${keySlotHoldersSql(schema, 'window_rows', 'window_rows.ordered')}
                      ) AS holders) END AS held,
           CASE WHEN window_rows.concurrency_key IS NULL OR NOT window_rows.rate_by_key THEN 0
                ELSE ${startsInWindow(schema, 'window_rows', 'window_rows.concurrency_key')}
           END AS key_starts
    FROM window_rows
`;

/**
 * V4's heads and takes: a keyed row is eligible while its key has both a concurrency slot and a
 * start in its rate window left for it (each counted with the row's rank within its key).
 */
const HEADS_AND_TAKES = (schema: QueueSchema): string => `  ), eligible AS (
    SELECT window_slots.job_type, window_slots.id, window_slots.priority,
           window_slots.created_at,
           row_number() OVER (PARTITION BY window_slots.job_type
                              ORDER BY window_slots.priority DESC, window_slots.created_at ASC,
                                       window_slots.id ASC) AS n
    FROM window_slots
    WHERE window_slots.concurrency_key IS NULL
       OR ((window_slots.per_key IS NULL
            OR window_slots.held + window_slots.key_rank <= window_slots.per_key)
           AND (NOT window_slots.rate_by_key
                OR window_slots.key_starts + window_slots.key_rank <= window_slots.rate_max))
  ), heads AS (
    SELECT limits.job_type, head.priority, head.created_at, head.id
    FROM limits CROSS JOIN LATERAL (${bestOfType(schema, 'limits', 'limits.room', '')}
    ) AS head
    WHERE NOT limits.keyed
    UNION ALL
    SELECT eligible.job_type, eligible.priority, eligible.created_at, eligible.id
    FROM eligible JOIN limits ON limits.job_type = eligible.job_type
    WHERE eligible.n <= limits.room
  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT heads.job_type FROM heads
          ORDER BY heads.priority DESC, heads.created_at ASC, heads.id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*, limits.keyed, COALESCE(shares.take, 0) AS take
    FROM types JOIN limits ON limits.job_type = types.job_type
      LEFT JOIN shares ON shares.job_type = types.job_type
`;

/** V4's locking read, split by `keyed` instead of the per-key concurrency limit. */
const CANDIDATES = (schema: QueueSchema): string => `  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (${bestOfType(schema, 'takes', 'takes.take', LOCK)}
    ) AS locked
    WHERE takes.take > 0 AND NOT takes.keyed
    UNION ALL
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.id = ANY (ARRAY(
              SELECT heads.id FROM heads WHERE heads.job_type = takes.job_type
              ORDER BY heads.priority DESC, heads.created_at ASC, heads.id ASC
              LIMIT takes.take))
        AND j.status = 'pending'
      FOR UPDATE SKIP LOCKED
    ) AS locked
    WHERE takes.take > 0 AND takes.keyed
`;

/**
 * V4's set-aside, for the keys at their concurrency limit (their slots' holders locked, see V4)
 * and now also for the keys at their rate limit: those need no holder, for time frees them. Each
 * such key gets a row in `job_rate_blocked` with the moment its oldest start in the window
 * leaves it; the function's release statement (`releaseRateBlockedKeys`) moves the key's waiting
 * jobs back then.
 */
const SET_ASIDE = (schema: QueueSchema): string => `  ), full_keys AS (
    SELECT DISTINCT window_slots.job_type, window_slots.concurrency_key, window_slots.ordered,
           window_slots.held
    FROM window_slots
    WHERE window_slots.concurrency_key IS NOT NULL AND window_slots.per_key IS NOT NULL
      AND window_slots.held >= window_slots.per_key
  ), locked_holders AS (
    SELECT full_keys.job_type, full_keys.concurrency_key
    FROM full_keys CROSS JOIN LATERAL (${keySlotHoldersSql(schema, 'full_keys', 'full_keys.ordered')}
      FOR SHARE SKIP LOCKED
    ) AS holder
  ), settled_keys AS (
    SELECT full_keys.job_type, full_keys.concurrency_key FROM full_keys
    WHERE (SELECT count(*) FROM locked_holders
           WHERE locked_holders.job_type = full_keys.job_type
             AND locked_holders.concurrency_key = full_keys.concurrency_key) >= full_keys.held
  ), rate_full_keys AS (
    SELECT DISTINCT window_slots.job_type, window_slots.concurrency_key,
           window_slots.window_start
    FROM window_slots
    WHERE window_slots.concurrency_key IS NOT NULL AND window_slots.rate_by_key
      AND window_slots.key_starts >= window_slots.rate_max
  ), blocked AS (
    INSERT INTO ${schema.jobRateBlocked} AS b (job_type, rate_key, opens_at)
    SELECT rate_full_keys.job_type, rate_full_keys.concurrency_key,
           (SELECT min(s.started_at) FROM ${schema.jobRateStarts} s
            WHERE s.job_type = rate_full_keys.job_type
              AND s.rate_key = rate_full_keys.concurrency_key
              AND s.started_at > rate_full_keys.window_start)
             + (COALESCE($4, clock_timestamp()) - rate_full_keys.window_start)
    FROM rate_full_keys
    ON CONFLICT (job_type, rate_key) DO UPDATE SET opens_at = EXCLUDED.opens_at
    RETURNING b.job_type
  ), set_aside AS (
    SELECT aside.id
    FROM (SELECT settled_keys.job_type, settled_keys.concurrency_key FROM settled_keys
          UNION
          SELECT rate_full_keys.job_type, rate_full_keys.concurrency_key FROM rate_full_keys)
      AS keys CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = keys.job_type
        AND j.concurrency_key = keys.concurrency_key
      ORDER BY j.id
      LIMIT ${SET_ASIDE_PER_KEY}
      FOR UPDATE SKIP LOCKED
    ) AS aside
  ), waiting AS (
    UPDATE ${schema.jobs} AS jobs SET status = 'waiting', updated_at = COALESCE($4, now())
    FROM set_aside WHERE jobs.id = set_aside.id
    RETURNING jobs.id
`;

/**
 * The starts this claim made, one row per rate-limited type (or per key, for `rate_by_key`;
 * an unkeyed job of such a type counts against no key), at the claim's clock: read after the
 * window's start was, so a start is never counted earlier than it happened.
 */
const RECORD_STARTS = (schema: QueueSchema): string => `  ), started AS (
    INSERT INTO ${schema.jobRateStarts} (job_type, rate_key, started_at, starts)
    SELECT claimed.job_type,
           CASE WHEN limits.rate_by_key THEN claimed.concurrency_key ELSE '' END,
           COALESCE($4, clock_timestamp()), count(*)
    FROM claimed JOIN limits ON limits.job_type = claimed.job_type
    WHERE limits.rate_max IS NOT NULL
      AND (NOT limits.rate_by_key OR claimed.concurrency_key IS NOT NULL)
    GROUP BY 1, 2
    RETURNING 1
`;

/**
 * The claim of a call that requests a type with a concurrency or a rate limit: V4's
 * (`claimJobBatchQueryV4`), with the rate limits of `job_types` (`rate_max` starts in any window
 * of `rate_per_ms`, per type or, with `rate_by_key`, per `concurrency_key`):
 * - a type's room is cut to what its window has left: at its limit, it takes nothing and reads
 *   nothing of its queue;
 * - per key, a row is eligible while its key's window has a start left for it; a key at its
 *   limit has its pending jobs set aside, as a key at its concurrency limit does, until its
 *   window opens (`job_rate_blocked`);
 * - the starts it makes are recorded (`job_rate_starts`) in the same statement.
 *
 * Installed by AddRateLimits (1795939200012), in the function's V4 body, after the type's lock.
 */
export const claimJobBatchQueryV5 = (schema: QueueSchema): string =>
  CLAIM_REQUESTED_TYPES +
  notPaused(schema) +
  GROUP_REQUESTED_TYPES +
  CURSOR_SEGMENTS +
  limitsAndWindows(schema) +
  HEADS_AND_TAKES(schema) +
  CANDIDATES(schema) +
  SET_ASIDE(schema) +
  claimedUpdate(schema) +
  RECORD_STARTS(schema) +
  CLAIMED_RESULT;

/**
 * The statements the function's V4 body runs after the types' locks and before the limited
 * claim, so that the claim's snapshot sees what they did:
 * - the starts that left their windows are deleted (only the window is ever read, through
 *   `job_rate_starts_window_idx`, so this bounds the table, not the reads);
 * - each key whose rate window has opened (`job_rate_blocked.opens_at`) has up to `rate_max` of
 *   its waiting jobs moved back to `pending`, best first. Its row goes once none is left waiting;
 *   while some are, it stays, due, and the next claims move more back until the key is at its
 *   limit again and the claim's set-aside gives it the next opening: no key's jobs wait with
 *   nothing to release them.
 */
export const releaseRateBlockedKeys = (schema: QueueSchema): string => `
      DELETE FROM ${schema.jobRateStarts} s USING ${schema.jobTypes} lt
      WHERE lt.job_type = ANY (p_job_types) AND lt.rate_max IS NOT NULL
        AND s.job_type = lt.job_type AND s.started_at <= ${rateWindowStart('lt.rate_per_ms')};
      WITH opened AS (
        SELECT b.job_type, b.rate_key, lt.rate_max
        FROM ${schema.jobRateBlocked} b LEFT JOIN ${schema.jobTypes} lt ON lt.job_type = b.job_type
        WHERE b.job_type = ANY (p_job_types) AND b.opens_at <= COALESCE($4, clock_timestamp())
      ), moved AS (
        UPDATE ${schema.jobs} AS jobs SET status = 'pending', updated_at = COALESCE($4, now())
        FROM (SELECT w.id FROM opened CROSS JOIN LATERAL (
                SELECT j.id FROM ${schema.jobs} j
                WHERE j.status = 'waiting' AND j.job_type = opened.job_type
                  AND j.concurrency_key = opened.rate_key
                ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
                LIMIT opened.rate_max
                FOR UPDATE SKIP LOCKED) AS w) AS picked
        WHERE jobs.id = picked.id
        RETURNING jobs.id
      ), emptied AS (
        DELETE FROM ${schema.jobRateBlocked} b USING opened
        WHERE b.job_type = opened.job_type AND b.rate_key = opened.rate_key
          AND NOT EXISTS (SELECT 1 FROM ${schema.jobs} j
                          WHERE j.status = 'waiting' AND j.job_type = opened.job_type
                            AND j.concurrency_key = opened.rate_key
                          OFFSET opened.rate_max)
        RETURNING 1
      )
      SELECT count(*) INTO released_jobs FROM moved;`;

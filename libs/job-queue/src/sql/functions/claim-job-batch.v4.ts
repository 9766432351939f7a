import { QueueSchema } from '../queue-schema';
import {
  CLAIM_REQUESTED_TYPES,
  claimCandidates,
  GROUP_REQUESTED_TYPES,
} from './claim-job-batch.parts';
import { notPaused } from './claim-job-batch.v2';
import { bestOfType, CURSOR_SEGMENTS, LOCK } from './claim-job-batch.v3';
import { keySlotHoldersSql } from './release-key-slot.v1';

/**
 * How many pending jobs of one key at its limit a claim sets aside (as `waiting`): a burst
 * enqueued for a busy key is moved out of the claim's way over a few claims, each a bounded
 * write, instead of one that holds the type's lock for as long as the burst takes.
 */
export const SET_ASIDE_PER_KEY = 20_000;

/**
 * A requested type's pending jobs from the head of its queue, in the claim's order. Due by the
 * clock at the read, not by now(): the function's call may have waited for the lock, and a job
 * made pending again meanwhile (a retry without backoff) has a `run_at` after the call's start.
 * Left out, an ordered key's retried job would let the key's next job start before it.
 */
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
 * Each requested type's limits from `job_types`, and its room: its cap, cut to the slots its
 * `global_concurrency` has free (the type's claimed and running jobs, on every node, counted).
 * Then, for each type with a per-key limit, the window: the first rows of its queue (its room
 * and up to 16 more, so a few jobs of busy keys do not starve the claim), each with its rank
 * among the window's jobs of its key and how many of its key's slots are held (counted for each
 * row: a join of the rows to a list of their keys would read that list once per row).
 */
const limitsAndWindows = (schema: QueueSchema): string => `  ), limits AS (
    SELECT types.job_type, lt.concurrency_per_key AS per_key,
           COALESCE(lt.ordered_keys, false) AS ordered,
           CASE WHEN lt.global_concurrency IS NULL THEN types.cap
                ELSE LEAST(types.cap, GREATEST(0, lt.global_concurrency - (
                  SELECT count(*) FROM ${schema.jobs} h
                  WHERE h.status IN ('claimed', 'running') AND h.job_type = types.job_type)))
           END AS room
    FROM types LEFT JOIN ${schema.jobTypes} lt ON lt.job_type = types.job_type
  ), window_rows AS (
    SELECT limits.job_type, limits.per_key, limits.ordered, w.id, w.priority, w.created_at,
           w.concurrency_key,
           row_number() OVER (PARTITION BY limits.job_type, w.concurrency_key
                              ORDER BY w.priority DESC, w.created_at ASC, w.id ASC) AS key_rank
    FROM limits CROSS JOIN LATERAL (${fromTheHead(
      schema,
      'limits',
      'j.id, j.priority, j.created_at, j.concurrency_key',
      'limits.room + LEAST(limits.room, 16)',
    )}
    ) AS w
    WHERE limits.per_key IS NOT NULL AND limits.room > 0
  ), window_slots AS (
    SELECT window_rows.*,
           CASE WHEN window_rows.concurrency_key IS NULL THEN 0
                ELSE (SELECT count(*) FROM (${keySlotHoldersSql(schema, 'window_rows', 'window_rows.ordered')}
                      ) AS holders) END AS held
    FROM window_rows
`;

/**
 * The rows the claim may take, best first: for a type without a per-key limit, its best rows up
 * to its room across its segments (V3's, from where the caller's cursors say its last claim
 * ended, or from the head); for one with, the window's rows that are unkeyed or whose
 * key has a slot free for them (held slots plus the row's rank within its key), up to its room.
 * Then V2's shares of the batch across types.
 */
const HEADS_AND_TAKES = (schema: QueueSchema): string => `  ), eligible AS (
    SELECT window_slots.job_type, window_slots.id, window_slots.priority,
           window_slots.created_at,
           row_number() OVER (PARTITION BY window_slots.job_type
                              ORDER BY window_slots.priority DESC, window_slots.created_at ASC,
                                       window_slots.id ASC) AS n
    FROM window_slots
    WHERE window_slots.concurrency_key IS NULL
       OR window_slots.held + window_slots.key_rank <= window_slots.per_key
  ), heads AS (
    SELECT limits.job_type, head.priority, head.created_at, head.id
    FROM limits CROSS JOIN LATERAL (${bestOfType(schema, 'limits', 'limits.room', '')}
    ) AS head
    WHERE limits.per_key IS NULL
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
    SELECT types.*, limits.per_key, COALESCE(shares.take, 0) AS take
    FROM types JOIN limits ON limits.job_type = types.job_type
      LEFT JOIN shares ON shares.job_type = types.job_type
`;

/**
 * The locking read: a type without a per-key limit locks its best `take` claimable rows across
 * its segments (SKIP LOCKED), as V3 does; one with locks the heads it takes, by id. Claims of a
 * limited type take turns (the function's lock), so nothing but a cancel or a hand edit can hold
 * one of those rows meanwhile; a row that changed since is dropped by the re-check.
 */
const CANDIDATES = (schema: QueueSchema): string => `  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (${bestOfType(schema, 'takes', 'takes.take', LOCK)}
    ) AS locked
    WHERE takes.take > 0 AND takes.per_key IS NULL
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
    WHERE takes.take > 0 AND takes.per_key IS NOT NULL
`;

/**
 * Sets aside the pending jobs of each key of a window that is at its limit (in the order of
 * `jobs_key_slots_idx`, which the ORDER BY makes the plan read: without it the planner, told
 * of thousands of a key's jobs, scanned the whole table for them): `waiting`, out of
 * `jobs_claim_idx`, so the next claims do not read them again. Only once every job holding the
 * key's slots is locked here (FOR SHARE; one another transaction holds is being released right
 * now, so the key is left as it is): the release of any of them then waits for this claim to
 * commit, and the trigger it fires sees these jobs to move back (`createReleaseKeySlotV1`).
 */
const SET_ASIDE = (schema: QueueSchema): string => `  ), full_keys AS (
    SELECT DISTINCT window_slots.job_type, window_slots.concurrency_key, window_slots.ordered,
           window_slots.held
    FROM window_slots
    WHERE window_slots.concurrency_key IS NOT NULL AND window_slots.held >= window_slots.per_key
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
  ), set_aside AS (
    SELECT aside.id FROM settled_keys CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = settled_keys.job_type
        AND j.concurrency_key = settled_keys.concurrency_key
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
 * The claim of a call that requests a type with a concurrency limit (`job_types`:
 * `concurrency_per_key`, `global_concurrency`, `ordered_keys`). The function has taken each such
 * type's lock first, in a statement of its own, so this one's snapshot sees every claim of them
 * that came before, committed: what runs is counted exactly, across every node.
 *
 * V3's claim (types, caps, policy, paused types, one priority order across types, the reads after
 * the caller's cursors, the UPDATE and fencing token), with:
 * - `global_concurrency`: a type takes at most its free slots (claimed and running jobs of the
 *   type, prefetched ones included, count as taken).
 * - `concurrency_per_key`: a keyed job is taken only while its key has a free slot, counting the
 *   key's claimed and running jobs (for `ordered_keys`, also one waiting out a retry's backoff)
 *   and the key's jobs this claim takes before it. Unkeyed jobs are not limited by it. The jobs
 *   of a key at its limit that the window meets are set aside as `waiting` (see `SET_ASIDE`), so
 *   a busy key's backlog costs the next claims nothing; a key's slot that frees moves them back.
 * - Ordered keys (`concurrency_per_key` 1): a key's next job is its best in the claim's order
 *   (priority, then enqueue order), once nothing holds the key.
 *
 * A type with a per-key limit reads its window from its head (its cursors are not used: the
 * jobs it set aside, or left for a busy key, come back behind them); every other type resumes
 * at its cursors, as V3 does.
 *
 * Installed by AddConcurrencyLimits (1795939200011). Exported so the plan tests EXPLAIN exactly
 * the text the function runs.
 */
export const claimJobBatchQueryV4 = (schema: QueueSchema): string =>
  CLAIM_REQUESTED_TYPES +
  notPaused(schema) +
  GROUP_REQUESTED_TYPES +
  CURSOR_SEGMENTS +
  limitsAndWindows(schema) +
  HEADS_AND_TAKES(schema) +
  CANDIDATES(schema) +
  SET_ASIDE(schema) +
  claimCandidates(schema);

import { QueueSchema } from '../queue-schema';

/*
 * The parts of the claim's statement that the versions share, shipped with V1
 * (`claimJobBatchQueryV1`) and frozen since: a database that ran a migration keeps the text it
 * installed, and a migration's `down()` must put back exactly that text. A version that needs
 * different text adds a part of its own (V2 its paused-types clause, V3 its reads after the
 * cursors); it never edits these. `claimOfRequestedTypes` is V1's and V2's second half, made of
 * the parts below it: the same bytes as when it was one string (test/unit/migrations.frozen.spec.ts).
 */

/** From `WITH` to the filter of the requested types: unnest the per-type arrays, drop NULL types. */
export const CLAIM_REQUESTED_TYPES = `
  WITH types AS (
    SELECT t.job_type,
           min(LEAST(COALESCE(t.cap, $3), $3)) AS cap,
           min(t.max_attempts) AS max_attempts,
           min(t.backoff_base_ms) AS backoff_base_ms,
           min(t.backoff_max_ms) AS backoff_max_ms,
           min(t.backoff_jitter) AS backoff_jitter
    FROM unnest($2::text[], $6::integer[], $7::integer[], $8::integer[], $9::integer[],
                $10::float8[])
      AS t(job_type, cap, max_attempts, backoff_base_ms, backoff_max_ms, backoff_jitter)
    WHERE t.job_type IS NOT NULL`;

/** The grouping of the requested types: one row per type, those that may take none dropped. */
export const GROUP_REQUESTED_TYPES = `
    GROUP BY t.job_type
    HAVING min(LEAST(COALESCE(t.cap, $3), $3)) > 0
`;

/** V1's and V2's heads: each type's first `cap` rows, from the head of its queue. */
const headsFromTheHead = (schema: QueueSchema): string => `  ), heads AS (
    SELECT types.job_type, head.priority, head.created_at, head.id
    FROM types CROSS JOIN LATERAL (
      SELECT j.priority, j.created_at, j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = types.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT types.cap
    ) AS head
    WHERE (SELECT count(*) FROM types) > 1
`;

/** How many jobs each type takes: its share of the best `$3` heads, or its cap when alone. */
export const SHARES_AND_TAKES = `  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT job_type FROM heads ORDER BY priority DESC, created_at ASC, id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*,
           CASE WHEN (SELECT count(*) FROM types) > 1 THEN COALESCE(shares.take, 0)
                ELSE types.cap END AS take
    FROM types LEFT JOIN shares ON shares.job_type = types.job_type
`;

/** V1's and V2's locking read: each type's first `take` claimable rows, from its head. */
const candidatesFromTheHead = (schema: QueueSchema): string => `  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT j.id FROM ${schema.jobs} j
      WHERE j.status = 'pending' AND j.job_type = takes.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT takes.take
      FOR UPDATE SKIP LOCKED
    ) AS locked
    WHERE takes.take > 0
`;

/** The UPDATE of the candidates, as the CTE `claimed`, open for the parts after it. */
export const claimedUpdate = (schema: QueueSchema): string => `  ), claimed AS (
    UPDATE ${schema.jobs} AS jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1,
      run_token = jobs.run_token + 1,
      max_attempts = COALESCE(jobs.max_attempts, candidates.max_attempts),
      backoff_base_ms = COALESCE(jobs.backoff_base_ms, candidates.backoff_base_ms),
      backoff_max_ms = COALESCE(jobs.backoff_max_ms, candidates.backoff_max_ms),
      backoff_jitter = COALESCE(jobs.backoff_jitter, candidates.backoff_jitter)
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
`;

/** The claimed rows, best first: the end of every version's statement. */
export const CLAIMED_RESULT = `  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC`;

/** The UPDATE of the candidates and the result, best first. */
export const claimCandidates = (schema: QueueSchema): string =>
  claimedUpdate(schema) + CLAIMED_RESULT;

/**
 * From the grouping of the requested types to the end: per-type caps and policy, the heads, the
 * shares of the batch, the locking read and the UPDATE.
 */
export const claimOfRequestedTypes = (schema: QueueSchema): string =>
  GROUP_REQUESTED_TYPES +
  headsFromTheHead(schema) +
  SHARES_AND_TAKES +
  candidatesFromTheHead(schema) +
  claimCandidates(schema);

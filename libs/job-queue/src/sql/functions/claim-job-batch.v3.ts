import { QueueSchema } from '../queue-schema';
import {
  CLAIM_REQUESTED_TYPES,
  claimCandidates,
  GROUP_REQUESTED_TYPES,
  SHARES_AND_TAKES,
} from './claim-job-batch.parts';
import { notPaused } from './claim-job-batch.v2';

/** The locking clause of the candidates' segment scans. */
export const LOCK = `
        FOR UPDATE SKIP LOCKED`;

/**
 * Reads a type's pending rows in one segment: priorities `lo` to `hi`, after the position
 * (`after_created_at`, `after_id`), in the claim's order, at most `limit`. Positioned in
 * `jobs_claim_idx` by all four bounds: when `lo = hi` the btree starts right after the position,
 * skipping the dead entries before it without reading them.
 */
const segmentScan = (schema: QueueSchema, limit: string, lock: string): string => `
        SELECT j.id, j.priority, j.created_at FROM ${schema.jobs} j
        WHERE j.status = 'pending' AND j.job_type = segments.job_type
          AND j.priority BETWEEN segments.lo AND segments.hi
          AND (j.created_at, j.id) > (segments.after_created_at, segments.after_id)
          AND j.run_at <= COALESCE($4, now())
        ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
        LIMIT ${limit}${lock}`;

/**
 * Up to `limit` of one type's best rows across its segments, in the claim's order (`owner` is
 * the CTE whose row names the type).
 */
export const bestOfType = (
  schema: QueueSchema,
  owner: string,
  limit: string,
  lock: string,
): string => `
      SELECT seg.id, seg.priority, seg.created_at
      FROM segments CROSS JOIN LATERAL (${segmentScan(schema, limit, lock)}
      ) AS seg
      WHERE segments.job_type = ${owner}.job_type
      ORDER BY seg.priority DESC, seg.created_at ASC, seg.id ASC
      LIMIT ${limit}`;

/**
 * The cursors the caller passes, one per (type, priority), for the requested types only (the
 * lowest where one is given twice), and the segments each type is read in. Priorities are
 * integers; the segments' bounds are bigints, so a cursor at either end of the range has
 * neighbours that do not overflow.
 */
export const CURSOR_SEGMENTS = `  ), cursors AS (
    SELECT DISTINCT ON (c.job_type, c.priority) c.job_type, c.priority::bigint AS priority,
           c.created_at, c.id
    FROM unnest($11::text[], $12::integer[], $13::timestamptz[], $14::bigint[])
      AS c(job_type, priority, created_at, id)
    WHERE c.job_type IN (SELECT types.job_type FROM types)
      AND c.priority IS NOT NULL AND c.created_at IS NOT NULL AND c.id IS NOT NULL
    ORDER BY c.job_type, c.priority, c.created_at ASC, c.id ASC
  ), segments AS (
    SELECT cursors.job_type, cursors.priority AS lo, cursors.priority AS hi,
           cursors.created_at AS after_created_at, cursors.id AS after_id
    FROM cursors
    UNION ALL
    SELECT above.job_type, above.priority + 1, above.hi, '-infinity'::timestamptz, 0::bigint
    FROM (
      SELECT cursors.job_type, cursors.priority,
             COALESCE(lag(cursors.priority) OVER (PARTITION BY cursors.job_type
                                                  ORDER BY cursors.priority DESC) - 1,
                      2147483647::bigint) AS hi
      FROM cursors
    ) AS above
    WHERE above.priority + 1 <= above.hi
    UNION ALL
    SELECT types.job_type, (-2147483648)::bigint,
           COALESCE(min(cursors.priority) - 1, 2147483647::bigint),
           '-infinity'::timestamptz, 0::bigint
    FROM types LEFT JOIN cursors ON cursors.job_type = types.job_type
    GROUP BY types.job_type
    HAVING COALESCE(min(cursors.priority) - 1, 2147483647::bigint) >= (-2147483648)::bigint
`;

/** Each type's best `cap` rows across its segments, without locking (read when several types). */
const headsAfterCursors = (schema: QueueSchema): string => `  ), heads AS (
    SELECT types.job_type, head.priority, head.created_at, head.id
    FROM types CROSS JOIN LATERAL (${bestOfType(schema, 'types', 'types.cap', '')}
    ) AS head
    WHERE (SELECT count(*) FROM types) > 1
`;

/** The locking read: each type's best `take` claimable rows across its segments. */
const candidatesAfterCursors = (schema: QueueSchema): string => `  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (${bestOfType(schema, 'takes', 'takes.take', LOCK)}
    ) AS locked
    WHERE takes.take > 0
`;

/**
 * V2's claim (the same types, caps, shares, paused types, order, locking and UPDATE), reading
 * each type's queue from where this worker's last claim of it ended rather than from its head.
 *
 * Why: a claimed job's entry in `jobs_claim_idx` stays in the index until VACUUM removes it, and
 * VACUUM may not while any snapshot older than the claim is held (a long report query, a
 * pg_dump, a forgotten psql session). Read from the head, every claim walks every such entry,
 * checking each one's row: a minute of a held snapshot at 2,000 jobs/s made each claim walk
 * 120,000 of them, and the claim fell behind the load (bench/README.md, "Held snapshot").
 *
 * New parameters, four aligned arrays, one element per (type, priority) a cursor is known for:
 * $11 job type, $12 priority, $13 `created_at`, $14 `id` of the last job the caller's previous
 * claim took at that type and priority (all NULL, the default: no cursor, every type is read from
 * its head, as V2 did). Each requested type is read in segments, each a positioned scan of the
 * index (`segments`):
 * - each priority with a cursor, from just after the cursor;
 * - each range of priorities between two cursors, above the highest and below the lowest (the
 *   whole type when it has none), from the range's head: a priority nobody claimed from has no
 *   dead entries to walk.
 * The segments are disjoint and cover every priority, so a type's best rows are the best of its
 * segments' best; a job of a new, higher priority is seen at once.
 *
 * What a cursor skips: a job that became pending behind it after the caller's claim passed there
 * (committed late by a transaction older than the claim, made pending again by a retry, a
 * hand-back or a rescue, or skipped while another claimer held it and rolled back). The caller
 * sends a claim without cursors now and then (see `ClaimCursors`), which finds them; the rest of
 * the time a claim reads only the rows it takes and the entries claimed since its last claim.
 *
 * Locking: a type with several non-empty segments locks up to its take in each and keeps its
 * best; the others stay locked, untouched, until the claim commits.
 *
 * Installed by ResumeClaimsAtCursors (1795939200009), with the function's four new parameters.
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const claimJobBatchQueryV3 = (schema: QueueSchema): string =>
  CLAIM_REQUESTED_TYPES +
  notPaused(schema) +
  GROUP_REQUESTED_TYPES +
  CURSOR_SEGMENTS +
  headsAfterCursors(schema) +
  SHARES_AND_TAKES +
  candidatesAfterCursors(schema) +
  claimCandidates(schema);

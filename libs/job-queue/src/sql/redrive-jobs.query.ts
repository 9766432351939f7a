import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { jobTypesSkipScanCte } from './job-types-skip-scan.sql';
import { uniqueKeyCountsSql } from './unique-keys.sql';

/** The most failed jobs one statement of `redriveJobs` moves. */
export const REDRIVE_BATCH_SIZE = 1_000;

/** `jobs_list_idx`'s predicate on the rows `i` and `j`: written out, so the planner may use it. */
const LISTED_I = `i.status NOT IN ('claimed', 'running')`;
const LISTED_J = `j.status NOT IN ('claimed', 'running')`;

/** The filters but the type, on the row `i`: `$3` since (by `completed_at`), `$4` ids. */
const FILTERS = `($3::timestamptz IS NULL OR i.completed_at >= $3::timestamptz)
      AND ($4::bigint[] IS NULL OR i.id = ANY ($4::bigint[]))`;

/**
 * The ids of the next failed jobs after the cursor `$1` (by id) that match the filters, at most
 * `$5`: of the type `$2` through `jobs_list_idx` (its failed entries in id order), or of every
 * type by skipping through that index (a descent per type, then each type's next ones, merged),
 * or by primary key when `$4` names the ids. Each shape keeps to its index: a statement with
 * every filter optional would let a generic plan walk the primary key over every job.
 */
const NEXT_OF_TYPE = (schema: QueueSchema): string => `
    SELECT i.id FROM ${schema.jobs} AS i
    WHERE i.job_type = $2::text AND i.status = 'failed' AND ${LISTED_I} AND i.id > $1::bigint
      AND ${FILTERS}
    ORDER BY i.id LIMIT $5::int`;

const NEXT_OF_EVERY_TYPE = (schema: QueueSchema): string => `
    SELECT page.id FROM types
    CROSS JOIN LATERAL (
      SELECT i.id FROM ${schema.jobs} AS i
      WHERE i.job_type = types.job_type AND i.status = 'failed' AND ${LISTED_I}
        AND i.id > $1::bigint AND ${FILTERS}
      ORDER BY i.id LIMIT $5::int
    ) AS page
    WHERE types.job_type IS NOT NULL AND $2::text IS NULL
    ORDER BY page.id LIMIT $5::int`;

const NEXT_OF_IDS = (schema: QueueSchema): string => `
    SELECT i.id FROM ${schema.jobs} AS i
    WHERE i.id = ANY ($4::bigint[]) AND i.id > $1::bigint AND i.status = 'failed'
      AND ($2::text IS NULL OR i.job_type = $2::text) AND ${FILTERS}
    ORDER BY i.id LIMIT $5::int`;

// One batch: the next failed jobs (`scanned`, the scan's page: where the next batch starts and
// whether there is one are decided by it, not by what could be locked), locked (SKIP LOCKED: a
// job a concurrent redrive or retry holds is that one's), then back to `pending` with a fresh set
// of attempts, as `retry` does. A job whose unique key another job holds (in any status the key
// counts in, as the unique index reads it) stays failed, and so does every candidate after the
// first of one batch that share a key: moving both would break the index.
type Part = (schema: QueueSchema) => string;
/** The CTE `types` of NEXT_OF_EVERY_TYPE (job-types-skip-scan.sql.ts), or none. */
const TYPES: Part = (schema) => `RECURSIVE ${jobTypesSkipScanCte(schema, LISTED_J)},`;
const NO_TYPES: Part = () => '';

const redriveStatement =
  (next: Part, ctes: Part) =>
  (schema: QueueSchema): string => `
  WITH ${ctes(schema)}
  scanned AS MATERIALIZED (${next(schema)}
  ), candidates AS (
    SELECT c.id, c.unique_key FROM ${schema.jobs} AS c
    WHERE c.id IN (SELECT scanned.id FROM scanned) AND c.status = 'failed'
    ORDER BY c.id
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
  SELECT (SELECT pg_catalog.max(scanned.id) FROM scanned)::text AS last_id,
         (SELECT pg_catalog.count(*) FROM moved)::int AS moved,
         (SELECT pg_catalog.count(*) FROM candidates)::int AS locked,
         (SELECT pg_catalog.count(*) FROM scanned)::int AS seen`;

const REDRIVE_OF_TYPE = redriveStatement(NEXT_OF_TYPE, NO_TYPES);
const REDRIVE_OF_EVERY_TYPE = redriveStatement(NEXT_OF_EVERY_TYPE, TYPES);
const REDRIVE_OF_IDS = redriveStatement(NEXT_OF_IDS, NO_TYPES);

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
  /** How many failed jobs it looked at: the page of its scan (a full one: there may be more). */
  seen: number;
  /** How many of those it locked (the others another transaction held: a redrive, a retry). */
  locked: number;
}

/** One statement of a redrive: the next batch of failed jobs after `afterId` back to `pending`. */
export async function redriveJobs(
  db: Queryable,
  schema: string,
  afterId: string,
  criteria: RedriveCriteria,
  limit: number = REDRIVE_BATCH_SIZE,
): Promise<RedriveBatch> {
  const [row] = await queryRows<{
    last_id: string | null;
    moved: number;
    seen: number;
    locked: number;
  }>(
    db,
    queueSchema(schema).statement(
      criteria.ids !== null
        ? REDRIVE_OF_IDS
        : criteria.type !== null
          ? REDRIVE_OF_TYPE
          : REDRIVE_OF_EVERY_TYPE,
    ),
    [afterId, criteria.type, criteria.since, criteria.ids, limit],
  );
  return { lastId: row.last_id, moved: row.moved, seen: row.seen, locked: row.locked };
}

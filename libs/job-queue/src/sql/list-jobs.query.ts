import { JobStatus } from '../entities/job-status.enum';
import { CheckedListJobsQuery } from '../validation/list-jobs.checks';
import { jobColumns } from './job-columns';
import { jobTypesSkipScanCte } from './job-types-skip-scan.sql';
import { JobRow, Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema, StatementBuilder } from './queue-schema';

/** The properties a listed job leaves out: payloads, which may be large. */
const UNLISTED = ['data', 'meta'];

let listed: string | undefined;

/** Every column of `jobs` but `data` and `meta`, of the row `j` (from the entity, constant). */
function listedColumns(): string {
  listed ??= jobColumns()
    .filter(({ property }) => !UNLISTED.includes(property))
    .map(({ column }) => `j.${column}`)
    .join(', ');
  return listed;
}

/**
 * The statuses a unique-key prefix matches in: `jobs_unique_key_prefix_idx`'s predicate, as it
 * is, so that the planner may use the index. `blocked` is left out: a blocked job has no key.
 */
const UNFINISHED = `j.status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')`;
/**
 * Jobs in flight: not in `jobs_list_idx` (so that a claim adds no entry to it), few (a worker's
 * slots and what it holds ahead), and all in `jobs_lease_idx`, whose predicate this is.
 */
const IN_FLIGHT: readonly string[] = [JobStatus.Claimed, JobStatus.Running];
const IN_FLIGHT_ROW = `f.status IN ('claimed', 'running')`;
/**
 * `jobs_list_idx`'s predicate, on a page's rows `i` and on the skip scan's `j`: written out, so
 * the planner may use the index.
 */
const LISTED_I = `i.status NOT IN ('claimed', 'running')`;
const LISTED_J = `j.status NOT IN ('claimed', 'running')`;
const ALL_STATUSES: readonly string[] = Object.values(JobStatus);
/** PostgreSQL's bigint maximum: the first page's bound. */
const MAX_BIGINT = '9223372036854775807';

// Every statement: $1 the rows to read (a page and one more, which says whether there is a next
// page), $2 the highest id the page may hold (below the cursor's). Newest first, by id.

/** No filter: the primary key, backwards from the cursor. */
const LIST_ALL = (schema: QueueSchema): string => `
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id <= $2::bigint
  ORDER BY j.id DESC LIMIT $1::integer`;

/**
 * `in_flight`: the ids of jobs in flight of the statuses in $3 (and the type $4 unless NULL)
 * below the cursor, all of them, from `jobs_lease_idx`. MATERIALIZED, so the page's LIMIT is not
 * pushed into it: with a limit, the planner may walk the primary key down from the cursor and
 * filter, which reads every row below it when few jobs are in flight.
 */
const inFlightCte = (schema: QueueSchema): string => `in_flight AS MATERIALIZED (
    SELECT f.id FROM ${schema.jobs} f
    WHERE ${IN_FLIGHT_ROW} AND f.status = ANY ($3::text[])
      AND ($4::text IS NULL OR f.job_type = $4::text) AND f.id <= $2::bigint
  )`;

/** $3 statuses in flight, $4 type or NULL: jobs in flight, newest first. */
const LIST_IN_FLIGHT = (schema: QueueSchema): string => `
  WITH ${inFlightCte(schema)}
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (SELECT id FROM in_flight ORDER BY id DESC LIMIT $1::integer)
  ORDER BY j.id DESC`;

/**
 * The newest ids of each (type $4, status in $3) in `jobs_list_idx` (an index-only scan where
 * the visibility map allows), a page and one more of each. Through unnest, so that the planner
 * cannot expect a pair to be common and walk the primary key instead, filtering, which reads
 * every row of a rare pair.
 */
const listedPagesOfType = (schema: QueueSchema): string => `
      SELECT page.id FROM pg_catalog.unnest($3::text[]) AS s(status)
      CROSS JOIN LATERAL (
        SELECT i.id FROM ${schema.jobs} i
        WHERE i.job_type = $4::text AND i.status = s.status AND ${LISTED_I}
          AND i.id <= $2::bigint
        ORDER BY i.id DESC LIMIT $1::integer
      ) AS page`;

/**
 * $3 every status, $4 the type: each status' newest ids and the type's jobs in flight, merged
 * and cut to the page, then those rows.
 */
const LIST_BY_TYPE = (schema: QueueSchema): string => `
  WITH ${inFlightCte(schema)}
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (
    SELECT u.id FROM (${listedPagesOfType(schema)}
      UNION ALL
      SELECT id FROM in_flight
    ) AS u
    ORDER BY u.id DESC LIMIT $1::integer)
  ORDER BY j.id DESC`;

/** $3 one status not in flight, $4 the type: the pair's newest ids, then those rows. */
const LIST_BY_TYPE_AND_STATUS = (schema: QueueSchema): string => `
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (${listedPagesOfType(schema)})
  ORDER BY j.id DESC`;

/**
 * $3 a status not in flight: every type found by skipping through `jobs_list_idx` (a descent
 * per type), the newest ids of each (type, status), merged and cut to the page, then those rows.
 */
const LIST_BY_STATUS = (schema: QueueSchema): string => `
  WITH RECURSIVE ${jobTypesSkipScanCte(schema, LISTED_J)}
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (
    SELECT page.id FROM types
    CROSS JOIN LATERAL (
      SELECT i.id FROM ${schema.jobs} i
      WHERE i.job_type = types.job_type AND i.status = $3::text AND ${LISTED_I}
        AND i.id <= $2::bigint
      ORDER BY i.id DESC LIMIT $1::integer
    ) AS page
    WHERE types.job_type IS NOT NULL
    ORDER BY page.id DESC LIMIT $1::integer)
  ORDER BY j.id DESC`;

/**
 * $3 the prefix as a LIKE pattern, $4 type or NULL, $5 status or NULL: unfinished jobs whose key
 * starts with it, compared in the "C" collation, so a range of `jobs_unique_key_prefix_idx`
 * (byte order, whatever the database's collation), sorted by id. The key stored with a window (`key` U+001F …) starts with the caller's key, and
 * a prefix holds no U+001F, so it matches the caller's keys exactly.
 */
const LIST_BY_KEY_PREFIX = (schema: QueueSchema): string => `
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.unique_key COLLATE pg_catalog."C" LIKE $3::text AND ${UNFINISHED}
    AND ($4::text IS NULL OR j.job_type = $4::text)
    AND ($5::text IS NULL OR j.status = $5::text)
    AND j.id <= $2::bigint
  ORDER BY j.id DESC LIMIT $1::integer`;

/** $3 id, $4 type, $5 status, $6 prefix pattern (each NULL when not given): one row at most. */
const LIST_BY_ID = (schema: QueueSchema): string => `
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id = $3::bigint AND j.id <= $2::bigint
    AND ($4::text IS NULL OR j.job_type = $4::text)
    AND ($5::text IS NULL OR j.status = $5::text)
    AND ($6::text IS NULL OR (j.unique_key COLLATE pg_catalog."C" LIKE $6::text AND ${UNFINISHED}))
  LIMIT $1::integer`;

/** A prefix as a LIKE pattern: `%`, `_` and `\` (LIKE's escape) taken literally. */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * The statement that serves `query` and its parameters after $1 and $2: one index path per
 * combination of filters (see each statement).
 */
function statementOf(query: CheckedListJobsQuery): [StatementBuilder, unknown[]] {
  const { id, type, status, uniqueKeyPrefix } = query;
  const pattern = uniqueKeyPrefix === null ? null : prefixPattern(uniqueKeyPrefix);
  if (id !== null) return [LIST_BY_ID, [id, type, status, pattern]];
  if (pattern !== null) return [LIST_BY_KEY_PREFIX, [pattern, type, status]];
  if (status !== null && IN_FLIGHT.includes(status)) return [LIST_IN_FLIGHT, [[status], type]];
  if (type !== null && status !== null) return [LIST_BY_TYPE_AND_STATUS, [[status], type]];
  if (type !== null) return [LIST_BY_TYPE, [ALL_STATUSES, type]];
  if (status !== null) return [LIST_BY_STATUS, [status]];
  return [LIST_ALL, []];
}

/**
 * Up to `query.limit + 1` jobs newest first below the cursor, `data` and `meta` left out: the
 * caller cuts the page and tells from the extra row that there is another.
 */
export function listJobRows(
  db: Queryable,
  schemaName: string,
  query: CheckedListJobsQuery,
): Promise<JobRow[]> {
  const [build, filters] = statementOf(query);
  const below = query.after === null ? MAX_BIGINT : (BigInt(query.after) - 1n).toString();
  return queryRows(db, queueSchema(schemaName).statement(build), [
    query.limit + 1,
    below,
    ...filters,
  ]);
}

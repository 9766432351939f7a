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

/** The statuses a unique-key prefix matches in: `jobs_unique_key_prefix_idx`'s predicate. */
const UNFINISHED = `j.status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')`;
/** The skip scan's condition when it looks for every type: any row (`jobs_list_idx`). */
const EVERY_ROW = 'true';
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
 * $3 type, $4 its statuses (every one, or the one asked for): the newest ids of each (type,
 * status) in `jobs_list_idx`, merged and cut to the page, then those rows. The ids come from the
 * index alone (an index-only scan where the visibility map allows), so the planner has no reason
 * to walk the primary key instead and filter, which would read every row of a rare pair.
 */
const LIST_BY_TYPE = (schema: QueueSchema): string => `
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (
    SELECT page.id FROM pg_catalog.unnest($4::text[]) AS s(status)
    CROSS JOIN LATERAL (
      SELECT i.id FROM ${schema.jobs} i
      WHERE i.job_type = $3::text AND i.status = s.status AND i.id <= $2::bigint
      ORDER BY i.id DESC LIMIT $1::integer
    ) AS page
    ORDER BY page.id DESC LIMIT $1::integer)
  ORDER BY j.id DESC`;

/**
 * $3 status: every type found by skipping through `jobs_list_idx` (a descent per type), the
 * newest ids of each (type, status), merged and cut to the page, then those rows.
 */
const LIST_BY_STATUS = (schema: QueueSchema): string => `
  WITH RECURSIVE ${jobTypesSkipScanCte(schema, EVERY_ROW)}
  SELECT ${listedColumns()} FROM ${schema.jobs} j
  WHERE j.id IN (
    SELECT page.id FROM types
    CROSS JOIN LATERAL (
      SELECT i.id FROM ${schema.jobs} i
      WHERE i.job_type = types.job_type AND i.status = $3::text AND i.id <= $2::bigint
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
  if (type !== null) return [LIST_BY_TYPE, [type, status === null ? ALL_STATUSES : [status]]];
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

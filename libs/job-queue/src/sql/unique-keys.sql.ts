import { JobStatus } from '../entities/job-status.enum';
import { JobQueueDatabaseError } from '../errors/job-queue-database.error';
import { UNIQUE_WINDOW_SEPARATOR } from '../job-queue.constants';
import { QueueSchema } from './queue-schema';
import { queueNowSql } from './queue-now.sql';

/** The statuses a job with a unique key can be in. */
/** The unique index of keys (AddUniquenessPolicies): a unique violation names it. */
export const UNIQUE_KEY_INDEX = 'jobs_unique_key_idx';

/**
 * Another job took a key between a statement's check and its write: the unique violation of
 * `jobs_unique_key_idx`, as the queue's database adapter reports it.
 */
export function isUniqueKeyTaken(error: unknown): boolean {
  return (
    error instanceof JobQueueDatabaseError &&
    error.code === '23505' &&
    error.constraint === UNIQUE_KEY_INDEX
  );
}

export type KeyedJobStatus = Exclude<JobStatus, JobStatus.Blocked>;

/**
 * How a row stores the statuses its unique key counts in (`jobs.unique_states`): one bit per
 * status. The bits are those of `job_unique_state_counts` (sql/functions/unique-state-counts.v1.ts);
 * NULL stores the default, the unfinished statuses. A key never counts in `blocked`: `dependsOn`
 * refuses a key, and a debounce's successor, the one blocked job with a key, shares its holder's
 * (`jobs_successor_key_idx` keeps successors one a key).
 */
export const UNIQUE_STATE_BITS: Readonly<Record<KeyedJobStatus, number>> = {
  [JobStatus.Scheduled]: 1,
  [JobStatus.Pending]: 2,
  [JobStatus.Waiting]: 4,
  [JobStatus.Claimed]: 8,
  [JobStatus.Running]: 16,
  [JobStatus.Completed]: 32,
  [JobStatus.Failed]: 64,
  [JobStatus.Cancelled]: 128,
};

/**
 * The statuses a unique key always counts in. A job moves between them by itself (a claim, a
 * retry's backoff, a rescue, a key's slot freeing up), so a key that did not count in one of
 * them could be taken meanwhile, and the move would then break the unique index.
 */
export const UNFINISHED_STATUSES: readonly KeyedJobStatus[] = [
  JobStatus.Scheduled,
  JobStatus.Pending,
  JobStatus.Claimed,
  JobStatus.Running,
  JobStatus.Waiting,
];

/** The bits of `UNFINISHED_STATUSES` in `jobs.unique_states`. */
const UNFINISHED_BITS = UNFINISHED_STATUSES.reduce(
  (mask, status) => mask | UNIQUE_STATE_BITS[status],
  0,
);

/** Whether a key with these `unique_states` (null: the default) counts in no finished status. */
export function countsOnlyUnfinished(states: number | null): boolean {
  return states === null || (states & ~UNFINISHED_BITS) === 0;
}

/**
 * The caller's key of a stored one: without its window. The queue hands out jobs with this
 * key, so `job.uniqueKey` is what was enqueued.
 */
export function callerUniqueKey(stored: string): string {
  const end = stored.indexOf(UNIQUE_WINDOW_SEPARATOR);
  return end === -1 ? stored : stored.slice(0, end);
}

/**
 * Whether `stored` is the key a row of this caller's key and window got: the window's start
 * comes from the statement's clock, so only its length is known here.
 */
export function isStoredUniqueKey(stored: string, key: string, windowMs: number | null): boolean {
  if (windowMs === null) return stored === key;
  return stored.startsWith(key + UNIQUE_WINDOW_SEPARATOR) && stored.endsWith(`/${windowMs}`);
}

/**
 * The key a row stores, in SQL, from the caller's `key` and its window length `windowMs` (NULL:
 * none): `key`, or `key` U+001F the window's start on the queue's clock (`queueNowSql(now)`: the
 * statement's now() unless the testing kit moved it), ISO 8601 in UTC,
 * `/` and the length, as in `report:42\x1f2026-12-03T12:00:00.000Z/3600000`. Windows are fixed,
 * counted from the Unix epoch: a job at 11:59:59 and one at 12:00:01 fall in different hourly
 * windows. Every operator has operands of one type, so no look-alike elsewhere on the caller's
 * search_path matches better than pg_catalog's.
 */
export const storedUniqueKeySql = (key: string, windowMs: string, now: string): string => `
  ${key} || COALESCE(E'\\x1f' || pg_catalog.to_char(
      pg_catalog.to_timestamp(pg_catalog.floor(
        pg_catalog.date_part('epoch', ${queueNowSql(now)}) * 1000::float8 / (${windowMs})::float8)
        * (${windowMs})::float8 / 1000::float8) AT TIME ZONE 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '/' || (${windowMs})::text, '')`;

/**
 * The predicate of `jobs_unique_key_idx` (AddUniquenessPolicies), word for word, for a row
 * written as `alias` (`j.`, or nothing in an ON CONFLICT clause): the row has a key, and its
 * status is one it counts in. The unfinished statuses are named first so that the previous
 * release's ON CONFLICT clause, which names only them, still infers the index.
 */
export const uniqueKeyCountsSql = (schema: QueueSchema, alias = ''): string =>
  `${alias}unique_key IS NOT NULL
         AND (${alias}status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
              OR ${schema.uniqueStateCounts}(${alias}unique_states, ${alias}status))`;

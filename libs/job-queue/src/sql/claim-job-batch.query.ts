import { Job } from '../entities/job.entity';
import { jobColumns } from './job-columns';
import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { TimestampTextParser } from './timestamp-text';
import { notifyJobEventsCtes } from './job-events.notify';
import { callerUniqueKey } from './unique-keys.sql';

interface ClaimColumns {
  /** Every column under its property name, timestamps as text. */
  selectList: string;
  /** The properties that arrive as timestamp text, to parse in place. */
  timestampProperties: string[];
}

let claimColumns: ClaimColumns | undefined;

/**
 * Columns come back under their property names, so a row needs no copying into a `Job`;
 * timestamps as text, parsed by `TimestampTextParser` (each distinct value once).
 */
function columnsOfClaim(): ClaimColumns {
  claimColumns ??= {
    selectList: jobColumns()
      .map(({ column, property, timestamptz }) =>
        timestamptz ? `${column}::text AS "${property}"` : `${column} AS "${property}"`,
      )
      .join(', '),
    timestampProperties: jobColumns()
      .filter(({ timestamptz }) => timestamptz)
      .map(({ property }) => property),
  };
  return claimColumns;
}

/**
 * What one claim may take, one entry per job type in each array (same order): the type, how
 * many of it at most (`null`: up to the batch size; 0: none, the type is at its own concurrency
 * limit), and its handler's policy, written into the claimed jobs whose row has none yet.
 */
export interface ClaimTypes {
  jobTypes: readonly string[];
  caps: ReadonlyArray<number | null>;
  maxAttempts: readonly number[];
  backoffBaseMs: readonly number[];
  backoffMaxMs: readonly number[];
  backoffJitter: readonly number[];
}

const CLAIM_CALL = (schema: QueueSchema): string => `${schema.claimJobBatch}($1::text, $2::text[],
         $3::integer, p_start => true,
         p_type_caps => $4::integer[], p_max_attempts => $5::integer[],
         p_backoff_base_ms => $6::integer[], p_backoff_max_ms => $7::integer[],
         p_backoff_jitter => $8::float8[], p_after_job_types => $9::text[],
         p_after_priorities => $10::integer[], p_after_created_at => $11::timestamptz[],
         p_after_ids => $12::bigint[], p_now => $13::timestamptz)`;

const CLAIM_AND_START_JOBS = (schema: QueueSchema): string => `
  SELECT ${columnsOfClaim().selectList}
  FROM ${CLAIM_CALL(schema)}
    CROSS JOIN pg_catalog.set_config('synchronous_commit', 'off', true)`;

const CLAIMED_EVENTS = notifyJobEventsCtes('claimed_events', '$14::text', '$1::text');

/**
 * The claim that also notifies `started` for each job it claims (`events.remote`). The LEFT JOIN
 * reads `events_notified` whatever the claim found: a CTE nobody reads is never run. With no job
 * claimed it returns one row of nulls, which `claimAndStartJobs` drops.
 */
const CLAIM_START_AND_NOTIFY = (schema: QueueSchema): string => `
  WITH claimed AS MATERIALIZED (
    SELECT j.* FROM ${CLAIM_CALL(schema)} AS j
      CROSS JOIN pg_catalog.set_config('synchronous_commit', 'off', true)
  ), claimed_events AS (
    SELECT id, job_type, status, attempts, progress, current_stage, 'started'::text AS event
    FROM claimed
  ), ${CLAIMED_EVENTS}
  SELECT ${columnsOfClaim().selectList}
  FROM events_notified LEFT JOIN claimed ON true`;

/** Where a claim ended in one type and priority: its last job's `created_at` (as text) and id. */
export interface ClaimPosition {
  jobType: string;
  priority: number;
  /** Exactly as PostgreSQL wrote it (`created_at::text`): a Date would drop the microseconds. */
  createdAt: string;
  id: string;
}

/** The cursors as the claim takes them: four aligned arrays (empty: read every type from its head). */
export interface ClaimAfter {
  jobTypes: string[];
  priorities: number[];
  createdAt: string[];
  ids: string[];
}

/** What one claim brought: its jobs, best first, and where it ended in each type and priority. */
export interface ClaimedJobs {
  jobs: Job[];
  /** The last job of each (type, priority) the claim took from, for `ClaimCursors.advance`. */
  ends: ClaimPosition[];
}

/**
 * Claims up to `batchSize` claimable jobs of `types` for `workerId`, in one priority order
 * across the types, through the `claim_job_batch` SQL function, and marks them running in the
 * same statement (the worker starts each job it claims at once); jobs come back best first, each
 * with its new `runToken` and its policy (`maxAttempts`, backoff) filled in. Each type and
 * priority in `after` is read from just after its cursor (see `ClaimCursors`). With `notify`, the
 * same statement sends a `started` event of each job on the schema's events channel.
 *
 * The statement the function runs is `currentClaimJobBatchQuery` (sql/functions/
 * current-functions.ts names the installed version; the versions and the function's definition
 * are beside it); the function as the database holds it, settings and grants included, is in
 * libs/job-queue/schema.sql.
 *
 * The claim commits without waiting for its WAL flush (`synchronous_commit` off for this
 * transaction only): a claim lost to a database crash leaves its job pending, to be claimed and
 * run again, which at-least-once delivery allows; enqueues and outcomes stay durable, and an idle
 * worker's claim does not wait for a disk flush (bench/README.md, "Shaped by measurement").
 *
 * `now`: the claim's time (due jobs, `started_at`, the lease); null, as workers pass, is the
 * database's now(). The testing kit passes its own clock's.
 */
export async function claimAndStartJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  types: ClaimTypes,
  batchSize: number,
  after: ClaimAfter = { jobTypes: [], priorities: [], createdAt: [], ids: [] },
  notify = false,
  now: Date | null = null,
): Promise<ClaimedJobs> {
  const queue = queueSchema(schema);
  const statement = queue.statement(notify ? CLAIM_START_AND_NOTIFY : CLAIM_AND_START_JOBS);
  const parameters = [
    workerId,
    types.jobTypes,
    batchSize,
    types.caps,
    types.maxAttempts,
    types.backoffBaseMs,
    types.backoffMaxMs,
    types.backoffJitter,
    after.jobTypes,
    after.priorities,
    after.createdAt,
    after.ids,
    now,
  ];
  if (notify) parameters.push(queue.eventsChannel);
  const rows = (await queryRows(db, statement, parameters)).filter((row) => row.id !== null);
  const ends = endsOf(rows);
  const timestamps = new TimestampTextParser();
  return { jobs: rows.map((row) => toClaimedJob(row, timestamps)), ends };
}

/** The last row of each (type, priority), `created_at` still as the text the claim sent. */
function endsOf(rows: JobRow[]): ClaimPosition[] {
  const last = new Map<string, ClaimPosition>();
  for (const row of rows) {
    const end: ClaimPosition = {
      jobType: row.jobType as string,
      priority: row.priority as number,
      createdAt: row.createdAt as string,
      id: row.id as string,
    };
    last.set(`${end.priority}:${end.jobType}`, end);
  }
  return [...last.values()];
}

/**
 * The row itself becomes the `Job`: its timestamps parsed in place, its prototype `Job`'s.
 * Copying each row into a new `Job` doubled what a claim allocates, and the worker's memory grew
 * with it (bench/README.md, "Shaped by measurement").
 */
function toClaimedJob(row: JobRow, timestamps: TimestampTextParser): Job {
  for (const property of columnsOfClaim().timestampProperties) {
    row[property] = timestamps.toDate(row[property] as string | null);
  }
  // The row stores the key with its window, if any; the handler sees the caller's key.
  if (typeof row.uniqueKey === 'string') row.uniqueKey = callerUniqueKey(row.uniqueKey);
  return Object.setPrototypeOf(row, Job.prototype) as Job;
}

import { Job } from '../entities/job.entity';
import { jobColumns } from './job-columns';
import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { TimestampTextParser } from './timestamp-text';

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

const CLAIM_AND_START_JOBS = (schema: QueueSchema): string => `
  SELECT ${columnsOfClaim().selectList}
  FROM ${schema.claimJobBatch}($1::text, $2::text[], $3::integer, p_start => true,
         p_type_caps => $4::integer[], p_max_attempts => $5::integer[],
         p_backoff_base_ms => $6::integer[], p_backoff_max_ms => $7::integer[],
         p_backoff_jitter => $8::float8[])
    CROSS JOIN pg_catalog.set_config('synchronous_commit', 'off', true)`;

/**
 * Claims up to `batchSize` claimable jobs of `types` for `workerId`, in one priority order
 * across the types, through the `claim_job_batch` SQL function, and marks them running in the
 * same statement (the worker starts each job it claims at once); jobs come back best first, each
 * with its new `runToken` and its policy (`maxAttempts`, backoff) filled in.
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
 */
export async function claimAndStartJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  types: ClaimTypes,
  batchSize: number,
): Promise<Job[]> {
  const rows = await queryRows(db, queueSchema(schema).statement(CLAIM_AND_START_JOBS), [
    workerId,
    types.jobTypes,
    batchSize,
    types.caps,
    types.maxAttempts,
    types.backoffBaseMs,
    types.backoffMaxMs,
    types.backoffJitter,
  ]);
  const timestamps = new TimestampTextParser();
  return rows.map((row) => toClaimedJob(row, timestamps));
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
  return Object.setPrototypeOf(row, Job.prototype) as Job;
}

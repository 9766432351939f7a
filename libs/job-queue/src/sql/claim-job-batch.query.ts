import { Job } from '../entities/job.entity';
import { jobColumns } from './job-columns';
import { Queryable, queryRows, JobRow } from './queryable';
import { TimestampTextParser } from './timestamp-text';

let selectList: string | undefined;

/** Every column, timestamps as text: they are parsed by `TimestampTextParser`, not per value. */
function claimSelectList(): string {
  selectList ??= jobColumns()
    .map(({ column, timestamptz }) => (timestamptz ? `${column}::text AS ${column}` : column))
    .join(', ');
  return selectList;
}

/**
 * Claims up to `batchSize` claimable jobs of `jobTypes` for `workerId` through the
 * `claim_job_batch` SQL function and marks them running in the same statement (the worker
 * starts each job it claims at once); jobs come back best first.
 *
 * The claim commits without waiting for its WAL flush (`synchronous_commit` off for this
 * transaction only): a claim lost to a database crash leaves its job pending, to be claimed and
 * run again, which at-least-once delivery allows; enqueues and outcomes stay durable. It takes
 * about 0.2 ms (a third) off an idle worker's claim of one job on this machine's disk.
 */
export async function claimAndStartJobs(
  db: Queryable,
  workerId: string,
  jobTypes: readonly string[],
  batchSize: number,
): Promise<Job[]> {
  const rows = await queryRows(
    db,
    `SELECT ${claimSelectList()}
     FROM claim_job_batch($1, $2::varchar[], $3, p_start => true)
       CROSS JOIN set_config('synchronous_commit', 'off', true)`,
    [workerId, jobTypes, batchSize],
  );
  const timestamps = new TimestampTextParser();
  return rows.map((row) => toClaimedJob(row, timestamps));
}

function toClaimedJob(row: JobRow, timestamps: TimestampTextParser): Job {
  const job = new Job() as unknown as Record<string, unknown>;
  for (const { column, property, timestamptz } of jobColumns()) {
    const value = row[column];
    job[property] = timestamptz ? timestamps.toDate(value as string | null) : value;
  }
  return job as unknown as Job;
}

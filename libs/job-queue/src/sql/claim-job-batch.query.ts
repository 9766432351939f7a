import { Queryable, queryRows, JobRow } from './queryable';

/**
 * Claims up to `batchSize` claimable jobs of `jobTypes` for `workerId` through the
 * `claim_job_batch` SQL function and marks them running in the same statement (the worker
 * starts each job it claims at once); rows come back best first.
 */
export function claimAndStartJobs(
  db: Queryable,
  workerId: string,
  jobTypes: readonly string[],
  batchSize: number,
): Promise<JobRow[]> {
  return queryRows(db, `SELECT * FROM claim_job_batch($1, $2::varchar[], $3, p_start => true)`, [
    workerId,
    jobTypes,
    batchSize,
  ]);
}

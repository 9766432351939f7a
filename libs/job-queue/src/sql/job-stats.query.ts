import { Queryable, queryRows } from './queryable';

export interface JobStatsRow {
  job_type: string;
  status: string;
  count: string;
}

/** Counts by type and status. Reads the whole table: a management call, not a per-job one. */
export function jobStatsRows(db: Queryable): Promise<JobStatsRow[]> {
  return queryRows<JobStatsRow>(
    db,
    `SELECT job_type, status, count(*) AS count FROM jobs GROUP BY job_type, status`,
    [],
  );
}

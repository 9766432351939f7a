import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

export interface JobStatsRow {
  job_type: string;
  status: string;
  count: string;
}

const JOB_STATS = (schema: QueueSchema): string =>
  `SELECT job_type, status, pg_catalog.count(*) AS count FROM ${schema.jobs} GROUP BY job_type, status`;

/** Counts by type and status. Reads the whole table: a management call, not a per-job one. */
export function jobStatsRows(db: Queryable, schema: string): Promise<JobStatsRow[]> {
  return queryRows<JobStatsRow>(db, queueSchema(schema).statement(JOB_STATS), []);
}

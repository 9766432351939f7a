import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { JobCountsByType } from './refresh-job-stats.query';

export interface JobStatsSnapshotRow {
  counts: JobCountsByType;
  count_ms: number;
  /** How old the snapshot is, by the database's clock (no skew with this process's). */
  age_ms: number;
}

const READ_JOB_STATS = (schema: QueueSchema): string => `
  SELECT s.counts, s.count_ms,
         pg_catalog.date_part('epoch', pg_catalog.now() - s.refreshed_at) * 1000::float8 AS age_ms
  FROM ${schema.jobStats} s`;

/** The stored snapshot of counts (one row, by primary key), or undefined before the first count. */
export async function readJobStats(
  db: Queryable,
  schemaName: string,
): Promise<JobStatsSnapshotRow | undefined> {
  const [row] = await queryRows<JobStatsSnapshotRow>(
    db,
    queueSchema(schemaName).statement(READ_JOB_STATS),
    [],
  );
  return row;
}

import { Queryable, queryRows } from '../sql/queryable';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { FINISHED_STATUS, jobTypesSkipScanCte } from '../sql/job-types-skip-scan.sql';

/** The chart's span, in minutes, newest last. */
export const THROUGHPUT_MINUTES = 60;

/**
 * Jobs completed and failed in each of the last `$2` minutes (`minutes_ago` 0 is the current
 * one), by `completed_at`. Each type's and status's newest finished jobs are read backwards
 * through `jobs_finished_idx` (job_type, status, completed_at), the types found by skipping
 * through the same index, and at most `$1` rows each: what one page view costs is bounded
 * however busy the hour was or however many rows the table holds. `job_events` has no index
 * on its time, so the lifecycle rows there would take a scan.
 */
const THROUGHPUT = (schema: QueueSchema): string => `
  WITH RECURSIVE ${jobTypesSkipScanCte(schema, FINISHED_STATUS)}
  SELECT types.job_type, finished.status,
         pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.now() - recent.completed_at)
                          / 60)::integer AS minutes_ago,
         pg_catalog.count(*)::integer AS jobs
  FROM types
  CROSS JOIN (VALUES ('completed'::text), ('failed'::text)) AS finished(status)
  CROSS JOIN LATERAL (
    SELECT j.completed_at FROM ${schema.jobs} j
    WHERE j.status IN ('completed', 'failed', 'cancelled')
      AND j.job_type = types.job_type AND j.status = finished.status
      AND j.completed_at > pg_catalog.now() - $2::integer * interval '1 minute'
    ORDER BY j.completed_at DESC
    LIMIT $1::integer
  ) AS recent
  WHERE types.job_type IS NOT NULL
  GROUP BY types.job_type, finished.status, minutes_ago`;

export interface Throughput {
  /** Index 0: 59 minutes ago … index 59: the current minute. */
  completed: number[];
  failed: number[];
  /** Whether a type and status had more jobs in the hour than were read (`perTypeCap`). */
  capped: boolean;
}

/** The chart's counts; see `THROUGHPUT`. */
export async function readThroughput(
  db: Queryable,
  schema: string,
  perTypeCap: number,
): Promise<Throughput> {
  const rows = await queryRows<{
    job_type: string;
    status: 'completed' | 'failed';
    minutes_ago: number;
    jobs: number;
  }>(db, queueSchema(schema).statement(THROUGHPUT), [perTypeCap, THROUGHPUT_MINUTES]);
  const series = {
    completed: new Array<number>(THROUGHPUT_MINUTES).fill(0),
    failed: new Array<number>(THROUGHPUT_MINUTES).fill(0),
  };
  const read = new Map<string, number>();
  for (const row of rows) {
    const minute = THROUGHPUT_MINUTES - 1 - Math.max(0, row.minutes_ago);
    if (minute >= 0) series[row.status][minute] += row.jobs;
    const key = `${row.status} ${row.job_type}`;
    read.set(key, (read.get(key) ?? 0) + row.jobs);
  }
  return { ...series, capped: [...read.values()].some((count) => count >= perTypeCap) };
}

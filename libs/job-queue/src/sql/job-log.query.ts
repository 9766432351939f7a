import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { JobLogEntry, JobLogKind } from '../interfaces/job-log-entry.interface';

// One statement reads both whether the job exists and a page of its log: no row at all means
// no such job; one row of nulls, a job with nothing (more) in its log.
const READ_JOB_LOG = (schema: QueueSchema): string => `
  SELECT e.id::text AS id, e.run_token, e.attempt, e.at, e.kind, e.message, e.data
  FROM ${schema.jobs} j
    LEFT JOIN LATERAL (
      SELECT * FROM ${schema.jobEvents} e
      WHERE e.job_id = j.id AND e.id > $2::bigint
      ORDER BY e.id
      LIMIT $3::integer
    ) e ON true
  WHERE j.id = $1::bigint`;

interface JobLogRowRead {
  id: string | null;
  run_token: number;
  attempt: number;
  at: Date;
  kind: JobLogKind;
  message: string | null;
  data: unknown;
}

/** A page of job `id`'s log after entry `after` (0: from the first); undefined: no such job. */
export async function readJobLog(
  db: Queryable,
  schema: string,
  id: string,
  after: string,
  limit: number,
): Promise<JobLogEntry[] | undefined> {
  const rows = await queryRows<JobLogRowRead>(db, queueSchema(schema).statement(READ_JOB_LOG), [
    id,
    after,
    limit,
  ]);
  if (rows.length === 0) return undefined;
  return rows
    .filter((row): row is JobLogRowRead & { id: string } => row.id !== null)
    .map((row) => ({
      id: row.id,
      jobId: id,
      attempt: row.attempt,
      runToken: row.run_token,
      at: row.at,
      kind: row.kind,
      message: row.message,
      data: row.data,
    }));
}

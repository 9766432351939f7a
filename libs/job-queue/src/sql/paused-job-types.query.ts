import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const PAUSED_JOB_TYPES = (schema: QueueSchema): string =>
  `SELECT job_type FROM ${schema.jobTypes} WHERE paused_at IS NOT NULL`;

/** The job types paused now, in no particular order. */
export async function pausedJobTypes(db: Queryable, schema: string): Promise<string[]> {
  const rows = await queryRows<{ job_type: string }>(
    db,
    queueSchema(schema).statement(PAUSED_JOB_TYPES),
    [],
  );
  return rows.map((row) => row.job_type);
}

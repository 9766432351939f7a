import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** A type with no row gets one; a paused one keeps the time it was first paused. */
const PAUSE_JOB_TYPE = (schema: QueueSchema): string => `
  INSERT INTO ${schema.jobTypes} AS t (job_type, paused_at)
  VALUES ($1::text, pg_catalog.now())
  ON CONFLICT (job_type) DO UPDATE
    SET paused_at = COALESCE(t.paused_at, EXCLUDED.paused_at), updated_at = pg_catalog.now()`;

/**
 * Marks `jobType` paused in `job_types`: from the commit on, no node's claim takes its jobs (see
 * the claim's V2). Pausing a paused type changes nothing.
 */
export async function pauseJobType(db: Queryable, schema: string, jobType: string): Promise<void> {
  await queryRows(db, queueSchema(schema).statement(PAUSE_JOB_TYPE), [jobType]);
}

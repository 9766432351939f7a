import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/**
 * A type with no row gets one; a paused one keeps the time it was first paused. The same
 * statement notifies the schema's pause channel with the type, as it commits.
 */
const PAUSE_JOB_TYPE = (schema: QueueSchema): string => `
  WITH paused AS (
    INSERT INTO ${schema.jobTypes} AS t (job_type, paused_at)
    VALUES ($1::text, pg_catalog.now())
    ON CONFLICT (job_type) DO UPDATE
      SET paused_at = COALESCE(t.paused_at, EXCLUDED.paused_at), updated_at = pg_catalog.now()
    RETURNING t.job_type
  )
  SELECT pg_catalog.pg_notify($2::text, paused.job_type) FROM paused`;

/**
 * Marks `jobType` paused in `job_types`: from the commit on, no node's claim takes its jobs (see
 * the claim's V2), and every worker that LISTENs drops the jobs of that type it holds and has
 * not started (`<schema>_job_type_paused`, payload the type; the others do at their next
 * heartbeat). Pausing a paused type changes nothing in the table.
 */
export async function pauseJobType(
  db: Queryable,
  schemaName: string,
  jobType: string,
): Promise<void> {
  const schema = queueSchema(schemaName);
  await queryRows(db, schema.statement(PAUSE_JOB_TYPE), [jobType, schema.pausedChannel]);
}

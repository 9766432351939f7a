import { Queryable, queryRows } from './queryable';
import { PENDING_AGAIN_PAYLOAD, QueueSchema, queueSchema } from './queue-schema';

const RESUME_JOB_TYPE = (schema: QueueSchema): string => `
  WITH resumed AS (
    UPDATE ${schema.jobTypes} SET paused_at = NULL, updated_at = pg_catalog.now()
    WHERE job_type = $1::text AND paused_at IS NOT NULL
    RETURNING job_type
  ), counted AS (
    SELECT pg_catalog.count(*)::integer AS resumed FROM resumed
  )
  SELECT counted.resumed FROM counted
    LEFT JOIN LATERAL (SELECT pg_catalog.pg_notify($2::text, $3::text)
                       WHERE counted.resumed > 0::integer)
      AS notified ON true`;

/**
 * Clears `jobType`'s pause (its row stays, for the type's other settings). When it was paused,
 * the same statement notifies the schema's insert channel, so idle workers on every node claim
 * its waiting jobs at once rather than at their next poll, from the heads of the queues (jobs
 * handed back when it was paused are behind where claims resume). Returns whether it was paused.
 */
export async function resumeJobType(
  db: Queryable,
  schemaName: string,
  jobType: string,
): Promise<boolean> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<{ resumed: number }>(db, schema.statement(RESUME_JOB_TYPE), [
    jobType,
    schema.insertedChannel,
    PENDING_AGAIN_PAYLOAD,
  ]);
  return row.resumed > 0;
}

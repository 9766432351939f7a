import { Queryable, queryRows } from './queryable';
import { PENDING_AGAIN_PAYLOAD, QueueSchema, queueSchema } from './queue-schema';

/** Most jobs one statement moves: a backlog that fell due at once is staged in bounded steps. */
export const STAGE_BATCH_SIZE = 1_000;

/** Exported so the plan test EXPLAINs exactly this text. */
export const STAGE_SCHEDULED_JOBS = (schema: QueueSchema): string => `
  WITH due AS (
    SELECT j.id FROM ${schema.jobs} j
    WHERE j.status = 'scheduled' AND j.run_at <= COALESCE($1::timestamptz, pg_catalog.now())
    ORDER BY j.run_at
    LIMIT $2::integer
    FOR UPDATE SKIP LOCKED
  ), staged AS (
    UPDATE ${schema.jobs} AS j SET status = 'pending',
                                   updated_at = COALESCE($1::timestamptz, pg_catalog.now())
    FROM due WHERE j.id = due.id
    RETURNING j.id
  ), moved AS (
    SELECT pg_catalog.count(*)::integer AS moved FROM staged
  )
  SELECT moved.moved FROM moved
    LEFT JOIN LATERAL (SELECT pg_catalog.pg_notify($3::text, $4::text) WHERE moved.moved > 0::integer)
      AS notified ON true`;

/**
 * Moves up to `limit` `scheduled` jobs whose `run_at` has come (by `now`, or the database's
 * now() when null: tests move time by passing one) to `pending`, earliest first, and returns how
 * many it moved. It reads them through `jobs_scheduled_idx`, so a million jobs due later cost a
 * pass nothing; rows another stager holds are skipped (`SKIP LOCKED`), so every worker node may
 * run one. When it moved any, the same statement notifies the schema's insert channel, so idle
 * workers everywhere claim at once, as after an insert, from the heads of the queues (the payload
 * says so: the staged jobs' place is behind where claims resume).
 */
export async function stageScheduledJobs(
  db: Queryable,
  schemaName: string,
  now: Date | null,
  limit = STAGE_BATCH_SIZE,
): Promise<number> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<{ moved: number }>(db, schema.statement(STAGE_SCHEDULED_JOBS), [
    now,
    limit,
    schema.insertedChannel,
    PENDING_AGAIN_PAYLOAD,
  ]);
  return row.moved;
}

import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const CANCEL_JOB = (schema: QueueSchema): string => `
  WITH cancelled AS (
    UPDATE ${schema.jobs} SET status = 'cancelled', completed_at = pg_catalog.now(),
                              updated_at = pg_catalog.now()
    WHERE id = $1::bigint AND status IN ('scheduled', 'pending', 'claimed', 'running')
    RETURNING *
  )
  SELECT cancelled.* FROM cancelled
    CROSS JOIN LATERAL pg_catalog.pg_notify($2::text,
      cancelled.id::text || ':' || cancelled.run_token::text) AS notified`;

/**
 * Cancels an unfinished job; returns its row, or nothing when no unfinished job has that id.
 *
 * The same statement notifies the schema's cancel channel with `<id>:<run_token>`: the worker that
 * runs that run (if any) gets it on its LISTEN connection when the cancel commits and aborts
 * exactly that run at once, instead of at its next heartbeat. The status is `cancelled` from the
 * commit on; the run that was cancelled is fenced by it (and by any later claim's new token).
 */
export async function cancelJobRow(
  db: Queryable,
  schemaName: string,
  id: string,
): Promise<JobRow | undefined> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows(db, schema.statement(CANCEL_JOB), [id, schema.cancelledChannel]);
  return row;
}

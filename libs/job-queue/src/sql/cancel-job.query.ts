import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { oneJobEventPayload } from './job-events.notify';
import { claimedRowMissingSql, endedRunRowsSql, insertLogRowsCte } from './job-log-rows';

// The job's log gets a `cancelled` row, after the running run's `claimed` row if it wrote none.
// A `waiting` job (set aside while its concurrency key is at its limit) is unfinished: it can be
// cancelled like a pending one.
const CANCEL_JOB = (schema: QueueSchema): string => `
  WITH cancelled AS (
    UPDATE ${schema.jobs} AS j SET status = 'cancelled', completed_at = pg_catalog.now(),
      events_count = j.events_count + 1
        + CASE WHEN ${claimedRowMissingSql(schema)} THEN 1 ELSE 0 END,
      updated_at = pg_catalog.now()
    WHERE j.id = $1::bigint
      AND j.status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
    RETURNING j.*, ${claimedRowMissingSql(schema)} AS claimed_missing
  ), ${insertLogRowsCte(schema, endedRunRowsSql('cancelled', 'cancelled', 'NULL::text'))}
  SELECT cancelled.* FROM cancelled
    CROSS JOIN LATERAL pg_catalog.pg_notify($2::text,
      cancelled.id::text || ':' || cancelled.run_token::text) AS notified`;

const CANCELLED_EVENT = oneJobEventPayload('cancelled', `'cancelled'::text`, '$4::text');

/** `CANCEL_JOB` that also notifies a `cancelled` event on the events channel (`events.remote`). */
const CANCEL_JOB_AND_NOTIFY = (schema: QueueSchema): string => `${CANCEL_JOB(schema)}
    CROSS JOIN LATERAL pg_catalog.pg_notify($3::text, ${CANCELLED_EVENT}) AS event_notified`;

/**
 * Cancels an unfinished job; returns its row, or nothing when no unfinished job has that id.
 *
 * The same statement notifies the schema's cancel channel with `<id>:<run_token>`: the worker that
 * runs that run (if any) gets it on its LISTEN connection when the cancel commits and aborts
 * exactly that run at once, instead of at its next heartbeat. The status is `cancelled` from the
 * commit on; the run that was cancelled is fenced by it (and by any later claim's new token).
 * With `notifyOrigin` (this process's workerId) it also sends the job's `cancelled` event on the
 * schema's events channel. The job's log gets its `cancelled` row (see `endedRunRowsSql`).
 */
export async function cancelJobRow(
  db: Queryable,
  schemaName: string,
  id: string,
  notifyOrigin?: string,
): Promise<JobRow | undefined> {
  const schema = queueSchema(schemaName);
  const [row] =
    notifyOrigin === undefined
      ? await queryRows(db, schema.statement(CANCEL_JOB), [id, schema.cancelledChannel])
      : await queryRows(db, schema.statement(CANCEL_JOB_AND_NOTIFY), [
          id,
          schema.cancelledChannel,
          schema.eventsChannel,
          notifyOrigin,
        ]);
  return row;
}

import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema, StatementBuilder } from './queue-schema';
import { oneJobEventPayload } from './job-events.notify';
import { claimedRowMissingSql, endedRunRowsSql, insertLogRowsCte } from './job-log-rows';

// The job's log gets a `cancelled` row, after the running run's `claimed` row if it wrote none.
// A `waiting` job (set aside while its concurrency key is at its limit) and a `blocked` one
// (unfinished dependencies) are unfinished: they can be cancelled like a pending one. `which`
// chooses the jobs: one by id ($1), or a flow's.
const cancelJobsSql = (schema: QueueSchema, which: string): string => `
  WITH cancelled AS (
    UPDATE ${schema.jobs} AS j SET status = 'cancelled', completed_at = pg_catalog.now(),
      events_count = j.events_count + 1
        + CASE WHEN ${claimedRowMissingSql(schema)} THEN 1 ELSE 0 END,
      updated_at = pg_catalog.now()
    WHERE ${which}
      AND j.status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting', 'blocked')
    RETURNING j.*, ${claimedRowMissingSql(schema)} AS claimed_missing
  ), ${insertLogRowsCte(schema, endedRunRowsSql('cancelled', 'cancelled', 'NULL::text'))}
  SELECT cancelled.* FROM cancelled
    CROSS JOIN LATERAL pg_catalog.pg_notify($2::text,
      cancelled.id::text || ':' || cancelled.run_token::text) AS notified`;

const CANCEL_JOB = (schema: QueueSchema): string => cancelJobsSql(schema, 'j.id = $1::bigint');

/*
 * A flow's unfinished jobs, by `jobs_flow_idx`. They are cancelled before any dependency trigger
 * runs (AFTER triggers fire at the statement's end), so a blocked job of the flow is cancelled
 * too, not failed by its cancelled dependency.
 */
const CANCEL_FLOW = (schema: QueueSchema): string => cancelJobsSql(schema, 'j.flow_id = $1::uuid');

const CANCELLED_EVENT = oneJobEventPayload('cancelled', `'cancelled'::text`, '$4::text');

/** `CANCEL_JOB` that also notifies a `cancelled` event on the events channel (`events.remote`). */
const CANCEL_JOB_AND_NOTIFY = (schema: QueueSchema): string => `${CANCEL_JOB(schema)}
    CROSS JOIN LATERAL pg_catalog.pg_notify($3::text, ${CANCELLED_EVENT}) AS event_notified`;

/** `CANCEL_FLOW` that also notifies each job's `cancelled` event. */
const CANCEL_FLOW_AND_NOTIFY = (schema: QueueSchema): string => `${CANCEL_FLOW(schema)}
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
  const [row] = await cancelRows(
    db,
    schemaName,
    [CANCEL_JOB, CANCEL_JOB_AND_NOTIFY],
    id,
    notifyOrigin,
  );
  return row;
}

/** Cancels the unfinished jobs of flow `flowId` as `cancelJobRow` cancels one; returns their rows. */
export function cancelFlowRows(
  db: Queryable,
  schemaName: string,
  flowId: string,
  notifyOrigin?: string,
): Promise<JobRow[]> {
  return cancelRows(db, schemaName, [CANCEL_FLOW, CANCEL_FLOW_AND_NOTIFY], flowId, notifyOrigin);
}

function cancelRows(
  db: Queryable,
  schemaName: string,
  [quiet, notifying]: [StatementBuilder, StatementBuilder],
  target: string,
  notifyOrigin: string | undefined,
): Promise<JobRow[]> {
  const schema = queueSchema(schemaName);
  return notifyOrigin === undefined
    ? queryRows(db, schema.statement(quiet), [target, schema.cancelledChannel])
    : queryRows(db, schema.statement(notifying), [
        target,
        schema.cancelledChannel,
        schema.eventsChannel,
        notifyOrigin,
      ]);
}

import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { oneJobEventPayload } from './job-events.notify';

const UPDATE_PROGRESS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET
    progress = $2::smallint,
    current_stage = CASE WHEN $3::boolean THEN $4::text ELSE current_stage END,
    events_count = events_count + 1,
    updated_at = pg_catalog.now()
  WHERE id = $1::bigint AND status IN ('scheduled', 'pending', 'claimed', 'running')
  RETURNING *`;

const UPDATE_RUN_PROGRESS_WHERE = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET
    progress = $3::smallint,
    current_stage = CASE WHEN $4::boolean THEN $5::text ELSE current_stage END,
    events_count = events_count + 1,
    updated_at = pg_catalog.now()
  WHERE id = $1::bigint AND run_token = $2::integer AND status IN ('claimed', 'running')`;

const UPDATE_RUN_PROGRESS = (schema: QueueSchema): string => `${UPDATE_RUN_PROGRESS_WHERE(schema)}
  RETURNING id`;

const UPDATE_RUN_PROGRESS_RETURNING = (schema: QueueSchema): string =>
  `${UPDATE_RUN_PROGRESS_WHERE(schema)}
  RETURNING id, job_type, status, attempts, progress, current_stage`;

const RUN_PROGRESS_EVENT = oneJobEventPayload('updated', `'progress'::text`, '$7::text');

const PROGRESS_EVENT = oneJobEventPayload('updated', `'progress'::text`, '$6::text');

/** `UPDATE_PROGRESS` that also notifies a `progress` event on the events channel. */
const UPDATE_PROGRESS_AND_NOTIFY = (schema: QueueSchema): string => `
  WITH updated AS (${UPDATE_PROGRESS(schema)})
  SELECT updated.* FROM updated
    CROSS JOIN LATERAL pg_catalog.pg_notify($5::text, ${PROGRESS_EVENT}) AS notified`;

/** `UPDATE_RUN_PROGRESS` that also notifies a `progress` event on the events channel. */
const UPDATE_RUN_PROGRESS_AND_NOTIFY = (schema: QueueSchema): string => `
  WITH updated AS (${UPDATE_RUN_PROGRESS_RETURNING(schema)})
  SELECT updated.id FROM updated
    CROSS JOIN LATERAL pg_catalog.pg_notify($6::text, ${RUN_PROGRESS_EVENT}) AS notified`;

/**
 * Records progress (and the stage, when given) on an unfinished job, whichever run holds it: a
 * management call (`QueueService.updateProgress`), not a run's. Returns the job's row, or nothing
 * when no unfinished job has that id. With `notifyOrigin`, it also sends the job's `progress`
 * event.
 */
export async function updateProgressRow(
  db: Queryable,
  schema: string,
  id: string,
  progress: number,
  stage: string | undefined,
  notifyOrigin?: string,
): Promise<JobRow | undefined> {
  const queue = queueSchema(schema);
  const parameters: unknown[] = [id, progress, stage !== undefined, stage ?? null];
  if (notifyOrigin === undefined) {
    const [row] = await queryRows(db, queue.statement(UPDATE_PROGRESS), parameters);
    return row;
  }
  parameters.push(queue.eventsChannel, notifyOrigin);
  const [row] = await queryRows(db, queue.statement(UPDATE_PROGRESS_AND_NOTIFY), parameters);
  return row;
}

/**
 * Records progress for one run of a job (`ctx.progress`): only while the job is still held by
 * that run (same fencing token, claimed or running). Returns false when it changed nothing: the
 * job was cancelled, retried or taken back since the run was claimed. With `notifyOrigin` (this
 * process's workerId), a write that lands also sends the job's `progress` event.
 */
export async function updateRunProgress(
  db: Queryable,
  schema: string,
  id: string,
  runToken: number,
  progress: number,
  stage: string | undefined,
  notifyOrigin?: string,
): Promise<boolean> {
  const queue = queueSchema(schema);
  const parameters: unknown[] = [id, runToken, progress, stage !== undefined, stage ?? null];
  if (notifyOrigin !== undefined) parameters.push(queue.eventsChannel, notifyOrigin);
  const statement =
    notifyOrigin === undefined ? UPDATE_RUN_PROGRESS : UPDATE_RUN_PROGRESS_AND_NOTIFY;
  const rows = await queryRows(db, queue.statement(statement), parameters);
  return rows.length > 0;
}

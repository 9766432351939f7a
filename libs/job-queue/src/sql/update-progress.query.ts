import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { oneJobEventPayload } from './job-events.notify';
import { givenLogRowsCte, insertLogRowsCte, JobLogRow, jobLogRowParameters } from './job-log-rows';

const UPDATE_PROGRESS_WRITE = (schema: QueueSchema): string => `
  WITH updated AS (
    UPDATE ${schema.jobs} SET
      progress = $2::smallint,
      current_stage = CASE WHEN $3::boolean THEN $4::text ELSE current_stage END,
      events_count = events_count + 1,
      updated_at = pg_catalog.now()
    WHERE id = $1::bigint
      AND status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting', 'blocked')
    RETURNING *
  ), logged AS (
    INSERT INTO ${schema.jobEvents} (job_id, run_token, attempt, at, kind, data)
    SELECT id, run_token, attempts, pg_catalog.now(), 'progress',
           pg_catalog.jsonb_build_object('progress', progress, 'stage', current_stage)
    FROM updated
  )`;

const UPDATE_PROGRESS = (schema: QueueSchema): string => `${UPDATE_PROGRESS_WRITE(schema)}
  SELECT updated.* FROM updated`;

/**
 * A run's write between claim and outcome: the progress it reported (`$3`, null: unchanged) and
 * stage, and the rows of its log (`$6`..`$11`: progress rows, `ctx.log` lines, its `claimed`
 * row), all or nothing, only while the run still holds the job.
 */
const UPDATE_RUN_WRITE = (schema: QueueSchema): string => `
  WITH updated AS (
    UPDATE ${schema.jobs} SET
      progress = COALESCE($3::smallint, progress),
      current_stage = CASE WHEN $4::boolean THEN $5::text ELSE current_stage END,
      events_count = events_count + pg_catalog.cardinality($6::bigint[]),
      updated_at = pg_catalog.now()
    WHERE id = $1::bigint AND run_token = $2::integer AND status IN ('claimed', 'running')
    RETURNING id, run_token, job_type, status, attempts, progress, current_stage
  ), ${givenLogRowsCte('updated', 6)}, ${insertLogRowsCte(schema, 'SELECT * FROM log_rows')}`;

const UPDATE_RUN_PROGRESS = (schema: QueueSchema): string => `${UPDATE_RUN_WRITE(schema)}
  SELECT updated.id FROM updated`;

const RUN_PROGRESS_EVENT = oneJobEventPayload('updated', `'progress'::text`, '$13::text');

/** `UPDATE_RUN_PROGRESS` that also notifies a `progress` event on the events channel. */
const UPDATE_RUN_PROGRESS_AND_NOTIFY = (schema: QueueSchema): string => `${UPDATE_RUN_WRITE(schema)}
  SELECT updated.id FROM updated
    CROSS JOIN LATERAL pg_catalog.pg_notify($12::text, ${RUN_PROGRESS_EVENT}) AS notified`;

const PROGRESS_EVENT = oneJobEventPayload('updated', `'progress'::text`, '$6::text');

/** `UPDATE_PROGRESS` that also notifies a `progress` event on the events channel. */
const UPDATE_PROGRESS_AND_NOTIFY = (
  schema: QueueSchema,
): string => `${UPDATE_PROGRESS_WRITE(schema)}
  SELECT updated.* FROM updated
    CROSS JOIN LATERAL pg_catalog.pg_notify($5::text, ${PROGRESS_EVENT}) AS notified`;

/**
 * Records progress (and the stage, when given) on an unfinished job, whichever run holds it: a
 * management call (`QueueService.updateProgress`), not a run's, so a job no run holds (`waiting`
 * for its concurrency key, `blocked` by its dependencies) takes it too. Returns the job's row, or nothing when no
 * unfinished job has that id. With `notifyOrigin`, it also sends the job's `progress` event.
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

/** What one write of a run carries: its progress (if it reported any since) and its log rows. */
export interface RunWrite {
  /** Null: the progress is unchanged (only log rows to write). */
  progress: number | null;
  /** Undefined: the stage is unchanged. */
  stage: string | undefined;
  rows: readonly JobLogRow[];
}

/**
 * Records progress and log rows for one run of a job (`ctx.progress`, `ctx.log`): only while the
 * job is still held by that run (same fencing token, claimed or running). Returns false when it
 * changed nothing: the job was cancelled, retried or taken back since the run was claimed, and
 * none of its rows were written. With `notifyOrigin` (this process's workerId), a write of
 * progress that lands also sends the job's `progress` event.
 */
export async function updateRunProgress(
  db: Queryable,
  schema: string,
  id: string,
  runToken: number,
  write: RunWrite,
  notifyOrigin?: string,
): Promise<boolean> {
  const queue = queueSchema(schema);
  const { progress, stage, rows } = write;
  const parameters: unknown[] = [
    id,
    runToken,
    progress,
    stage !== undefined,
    stage ?? null,
    ...jobLogRowParameters(rows),
  ];
  const notify = notifyOrigin !== undefined && progress !== null;
  if (notify) parameters.push(queue.eventsChannel, notifyOrigin);
  const statement = notify ? UPDATE_RUN_PROGRESS_AND_NOTIFY : UPDATE_RUN_PROGRESS;
  const found = await queryRows(db, queue.statement(statement), parameters);
  return found.length > 0;
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema, StatementBuilder } from './queue-schema';
import { JobStatus } from '../entities/job-status.enum';
import { notifyJobEventsCtes } from './job-events.notify';
import { queueNowSql } from './queue-now.sql';
import { integerArrayText } from './integer-array-text';
import {
  firstLineSql,
  givenLogRowsCte,
  insertLogRowsCte,
  JobLogRow,
  jobLogRowParameters,
} from './job-log-rows';

/**
 * The outcome of a run whose handler snoozed its job (`SnoozeJob`): written like a retry after
 * `retryDelayMs`, with the attempt given back (`attempts - 1`, undoing this run's claim).
 */
export const SNOOZED = 'snoozed';

/** The outcome of one attempt, as the completer writes it. */
export interface JobOutcome {
  id: string;
  /**
   * The fencing token of the run this outcome belongs to: a job cancelled, retried or claimed
   * again since is left alone.
   */
  runToken: number;
  /**
   * `pending` is a retry: written as `scheduled` with `run_at` = now() + `retryDelayMs` (or as
   * `pending`, due at once, when the delay is 0). `snoozed` is written the same way, and gives
   * the attempt back.
   */
  status: JobStatus.Completed | JobStatus.Failed | JobStatus.Pending | typeof SNOOZED;
  /** JSON text of the handler's result (completed only). */
  resultJson: string | null;
  lastError: string | null;
  /** For a retry (`pending`) or a snooze: delay before the next attempt. */
  retryDelayMs: number | null;
  /** Progress the throttle had not written yet; null: unchanged. */
  progress: number | null;
  stage: string | null;
  /**
   * The run's log rows still to write (its lines, progress, `claimed` row), written before its
   * outcome's own row; and whether the outcome writes that row (`completed`, `retrying` with the
   * error's first line, `failed`, `snoozed`).
   */
  logRows: readonly JobLogRow[];
  logOutcome: boolean;
}

/** The `logRows` of an outcome with none: one array for all of them, never written to. */
export const NO_LOG_ROWS: readonly JobLogRow[] = Object.freeze([]);

/** An outcome that changed nothing: its run no longer held the job. */
export interface SupersededOutcome {
  id: string;
  run_token: number;
}

/**
 * The guard of every outcome write: the job is still held by the very run the outcome belongs
 * to (same fencing token, same worker, claimed or running).
 */
const STILL_OURS = `j.id = o.id AND j.run_token = o.run_token AND j.worker_id = $1::text
       AND j.status IN ('claimed', 'running')`;

/** What both shapes return: the outcomes (`o`) whose write (`done`) matched no row. */
const SUPERSEDED = `SELECT o.id::text AS id, o.run_token FROM o
     WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = o.id AND done.run_token = o.run_token)`;

/** What the logged shape adds to the outcome write, at four places; nothing in the plain one. */
interface OutcomeLogParts {
  /** The queue's clock's parameter (`queueNowSql`): after the shape's other inputs. */
  now: string;
  arrays: string;
  columns: string;
  set: string;
  returning: string;
}

const NO_LOG: OutcomeLogParts = { now: '$10', arrays: '', columns: '', set: '', returning: '' };

/**
 * `o` also says how many log rows each outcome adds (`$10`) and whether it writes its own row
 * (`$11`); `events_count` grows by that many; `done` returns both for the rows' insert.
 */
const WITH_LOG: OutcomeLogParts = {
  now: '$18',
  arrays: `,
        pg_catalog.unnest($10::integer[]), pg_catalog.unnest($11::boolean[])`,
  columns: ', log_count, log_outcome',
  set: `
    events_count = j.events_count + o.log_count,`,
  returning: `,
    o.log_outcome, o.last_error`,
};

/** The outcome write's input rows and its UPDATE (`done`), for every shape. */
const finishJobsWrite = (schema: QueueSchema, log: OutcomeLogParts): string => `
  WITH o AS (
    SELECT * FROM ROWS FROM (
        pg_catalog.unnest($2::bigint[]), pg_catalog.unnest($3::integer[]),
        pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::jsonb[]),
        pg_catalog.unnest($6::text[]), pg_catalog.unnest($7::float8[]),
        pg_catalog.unnest($8::smallint[]), pg_catalog.unnest($9::text[])${log.arrays})
      AS o(id, run_token, status, result, last_error, retry_delay_ms, progress, stage${log.columns})
  ), done AS (
  UPDATE ${schema.jobs} AS j SET
    status = CASE WHEN o.status NOT IN ('pending', 'snoozed') THEN o.status
                  WHEN o.retry_delay_ms > 0::float8 THEN 'scheduled'
                  ELSE 'pending' END,
    result = CASE WHEN o.status = 'completed' THEN o.result ELSE j.result END,
    last_error = COALESCE(o.last_error, j.last_error),
    run_at = CASE WHEN o.status IN ('pending', 'snoozed')
                  THEN ${queueNowSql(log.now)} + o.retry_delay_ms * interval '1 millisecond'
                  ELSE j.run_at END,
    attempts = CASE WHEN o.status = 'snoozed' THEN GREATEST(j.attempts - 1, 0) ELSE j.attempts END,
    completed_at = CASE WHEN o.status IN ('pending', 'snoozed') THEN NULL
                        ELSE ${queueNowSql(log.now)} END,
    worker_id = CASE WHEN o.status IN ('pending', 'snoozed') THEN NULL ELSE j.worker_id END,
    heartbeat_at = NULL,
    progress = COALESCE(o.progress, j.progress),
    current_stage = COALESCE(o.stage, j.current_stage),${log.set}
    updated_at = ${queueNowSql(log.now)}
  FROM o
  WHERE ${STILL_OURS}
  RETURNING j.id, j.run_token, j.job_type, j.status, j.attempts, j.progress, j.current_stage,
    CASE o.status WHEN 'pending' THEN 'retrying' ELSE o.status END AS event${log.returning}
  )`;

const FINISH_JOBS_WRITE = (schema: QueueSchema): string => finishJobsWrite(schema, NO_LOG);

const FINISH_JOBS = (schema: QueueSchema): string => `${FINISH_JOBS_WRITE(schema)}
  ${SUPERSEDED}`;

const FINISH_EVENTS = notifyJobEventsCtes('done', '$11::text', '$1::text');

/**
 * `FINISH_JOBS_WRITE` that also writes the job's log: `o` gains how many rows each outcome adds
 * (`$10`) and whether it writes its own row (`$11`); the rows given (`$12`..`$17`) come first,
 * then each outcome's row, only for the outcomes that landed.
 */
/**
 * The rows of a logged outcome write: the runs' rows given, then each outcome's own (after all
 * given ones, so after its run's); the snooze's attempt is the run's, before it was given back.
 */
const OUTCOME_LOG_ROWS = `SELECT * FROM log_rows UNION ALL
     SELECT done.id, done.run_token,
            CASE WHEN done.event = 'snoozed' THEN done.attempts + 1 ELSE done.attempts END,
            ${queueNowSql(WITH_LOG.now)}, done.event,
            CASE WHEN done.event IN ('retrying', 'failed')
                 THEN ${firstLineSql('done.last_error')} END,
            NULL::jsonb, pg_catalog.cardinality($12::bigint[]) + 1
     FROM done WHERE done.log_outcome`;

const FINISH_JOBS_LOGGED_WRITE = (schema: QueueSchema): string =>
  `${finishJobsWrite(schema, WITH_LOG)},${givenLogRowsCte('done', 12)},
  ${insertLogRowsCte(schema, OUTCOME_LOG_ROWS)}`;

const FINISH_JOBS_LOGGED = (schema: QueueSchema): string => `${FINISH_JOBS_LOGGED_WRITE(schema)}
  ${SUPERSEDED}`;

const FINISH_LOGGED_EVENTS = notifyJobEventsCtes('done', '$19::text', '$1::text');

/** `FINISH_JOBS_AND_NOTIFY` that also writes the job's log (`FINISH_JOBS_LOGGED_WRITE`). */
const FINISH_JOBS_LOGGED_AND_NOTIFY = (schema: QueueSchema): string =>
  `${FINISH_JOBS_LOGGED_WRITE(schema)},
  ${FINISH_LOGGED_EVENTS},
  superseded AS (${SUPERSEDED})
  SELECT superseded.* FROM events_notified LEFT JOIN superseded ON true`;

/**
 * The outcome write that also notifies each landed outcome's event (`events.remote`). The LEFT
 * JOIN reads `events_notified` however many outcomes were superseded (a CTE nobody reads is never
 * run); with none, it returns one row of nulls, which `finishJobs` drops.
 */
const FINISH_JOBS_AND_NOTIFY = (schema: QueueSchema): string => `${FINISH_JOBS_WRITE(schema)},
  ${FINISH_EVENTS},
  superseded AS (${SUPERSEDED})
  SELECT superseded.* FROM events_notified LEFT JOIN superseded ON true`;

/**
 * Writes many outcomes in one statement. The guard (the run's own token, still held) leaves
 * alone a job that was cancelled, retried or taken back by the reaper while the run went on,
 * even when this worker claimed it again since. Returns the outcomes that changed nothing. With
 * `notify`, the same statement sends each landed outcome's event (`completed`, `failed`,
 * `retrying`, `snoozed`) on the schema's events channel; a superseded one sends none.
 */
export async function finishJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  outcomes: readonly JobOutcome[],
  notify = false,
  now: Date | null = null,
): Promise<SupersededOutcome[]> {
  if (outcomes.every(isPlainCompletion)) {
    return completeJobs(db, schema, workerId, outcomes, notify, now);
  }
  const parameters: unknown[] = [
    workerId,
    integerArrayText(outcomes.map((o) => o.id)),
    integerArrayText(outcomes.map((o) => o.runToken)),
    outcomes.map((o) => o.status),
    outcomes.map((o) => o.resultJson),
    outcomes.map((o) => o.lastError),
    outcomes.map((o) => o.retryDelayMs),
    outcomes.map((o) => o.progress),
    outcomes.map((o) => o.stage),
  ];
  if (!outcomes.some(writesLog)) {
    parameters.push(now);
    return writeOutcomes(db, schema, FINISH_JOBS, FINISH_JOBS_AND_NOTIFY, parameters, notify);
  }
  parameters.push(
    outcomes.map((o) => o.logRows.length + (o.logOutcome ? 1 : 0)),
    outcomes.map((o) => o.logOutcome),
    ...jobLogRowParameters(outcomes.flatMap((o) => o.logRows)),
    now,
  );
  return writeOutcomes(
    db,
    schema,
    FINISH_JOBS_LOGGED,
    FINISH_JOBS_LOGGED_AND_NOTIFY,
    parameters,
    notify,
  );
}

/**
 * Runs an outcome write: its `plain` shape, or with `notify` its `notifying` one, which takes the
 * events channel after `parameters` and returns a row of nulls when nothing was superseded.
 */
async function writeOutcomes(
  db: Queryable,
  schema: string,
  plain: StatementBuilder,
  notifying: StatementBuilder,
  parameters: unknown[],
  notify: boolean,
): Promise<SupersededOutcome[]> {
  const queue = queueSchema(schema);
  if (!notify) return queryRows<SupersededOutcome>(db, queue.statement(plain), parameters);
  const rows = await queryRows<SupersededOutcome>(db, queue.statement(notifying), [
    ...parameters,
    queue.eventsChannel,
  ]);
  return rows.filter((row) => row.id !== null);
}

function writesLog(outcome: JobOutcome): boolean {
  return outcome.logOutcome || outcome.logRows.length > 0;
}

function isPlainCompletion(outcome: JobOutcome): boolean {
  return (
    outcome.status === JobStatus.Completed &&
    outcome.progress === null &&
    outcome.stage === null &&
    !writesLog(outcome)
  );
}

const COMPLETE_JOBS_WRITE = (schema: QueueSchema): string => `
  WITH o AS (
    SELECT * FROM ROWS FROM (pg_catalog.unnest($2::bigint[]), pg_catalog.unnest($3::integer[]),
                             pg_catalog.unnest($4::jsonb[]))
      AS o(id, run_token, result)
  ), done AS (
  UPDATE ${schema.jobs} AS j SET
    status = 'completed', result = o.result, completed_at = ${queueNowSql('$5')},
    heartbeat_at = NULL, updated_at = ${queueNowSql('$5')}
  FROM o
  WHERE ${STILL_OURS}
  RETURNING j.id, j.run_token, j.job_type, j.status, j.attempts, j.progress, j.current_stage,
    'completed'::text AS event
  )`;

const COMPLETE_JOBS = (schema: QueueSchema): string => `${COMPLETE_JOBS_WRITE(schema)}
  ${SUPERSEDED}`;

const COMPLETE_EVENTS = notifyJobEventsCtes('done', '$6::text', '$1::text');

/** `COMPLETE_JOBS` that also notifies a `completed` event of each job it completes. */
const COMPLETE_JOBS_AND_NOTIFY = (schema: QueueSchema): string => `${COMPLETE_JOBS_WRITE(schema)},
  ${COMPLETE_EVENTS},
  superseded AS (${SUPERSEDED})
  SELECT superseded.* FROM events_notified LEFT JOIN superseded ON true`;

/**
 * The common batch, every job completed without a progress value still to write: the same
 * write with three arrays instead of eight, so the database decodes less per flush.
 */
async function completeJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  outcomes: readonly JobOutcome[],
  notify: boolean,
  now: Date | null,
): Promise<SupersededOutcome[]> {
  const parameters: unknown[] = [
    workerId,
    integerArrayText(outcomes.map((o) => o.id)),
    integerArrayText(outcomes.map((o) => o.runToken)),
    outcomes.map((o) => o.resultJson),
    now,
  ];
  return writeOutcomes(db, schema, COMPLETE_JOBS, COMPLETE_JOBS_AND_NOTIFY, parameters, notify);
}

import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';
import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { parseTimestamptzText, timestamptzInput } from './timestamp-text';
import { queueNowSql } from './queue-now.sql';
import { isStoredUniqueKey, storedUniqueKeySql, uniqueKeyCountsSql } from './unique-keys.sql';

/** One job to insert, already validated; `data` is its JSON text. */
export interface JobInsertRow {
  jobType: string;
  dataJson: string;
  priority: number;
  runAt: Date | null;
  delayMs: number;
  maxAttempts: number | null;
  /** The caller's key; the row stores it with its window folded in (`uniqueWindowMs`). */
  uniqueKey: string | null;
  /** `jobs.unique_states`: the statuses the key counts in; `null`: the unfinished ones. */
  uniqueStates: number | null;
  /** The fixed window of `uniqueForMs` or `throttleMs`; `null`: none. */
  uniqueWindowMs: number | null;
  /** `debounceMs` (already in `delayMs`): a holder not yet started takes the row's data instead. */
  debounceMs: number | null;
  concurrencyKey: string | null;
  /** `meta`'s JSON text (already checked), or `null` for none. */
  metaJson: string | null;
}

/** The queue's clock, `$3`: null (the statement's now()) unless the testing kit moved it. */
const QUEUE_NOW = queueNowSql('$3');

/** The input rows' columns, as `jsonb_to_recordset` reads them. */
const INPUT_ROWS = `ROWS FROM (pg_catalog.jsonb_to_recordset($1::jsonb) AS (
           type text, data jsonb, priority integer, run_at timestamptz, delay_ms float8,
           max_attempts integer, unique_key text, unique_states smallint, window_ms bigint,
           concurrency_key text, meta jsonb)) WITH ORDINALITY AS t`;

/** What comes back: the ids inserted and their stored keys, ascending, and the queue's now. */
const INSERTED_IDS = `
  SELECT COALESCE(pg_catalog.array_agg(id ORDER BY id), '{}')::text AS ids,
         CASE WHEN pg_catalog.bool_or(unique_key IS NOT NULL)
              THEN pg_catalog.array_agg(unique_key ORDER BY id) END AS keys,
         ${QUEUE_NOW}::text AS now
  FROM inserted`;

/** The columns every insert writes, from the input row `t` and its due time `due`. */
const insertedColumns = (uniqueKey: string): string => `
           t.type, COALESCE(t.data, 'null'::jsonb), COALESCE(t.priority, $2::integer),
           due.run_at,
           CASE WHEN due.run_at > ${QUEUE_NOW} THEN 'scheduled' ELSE 'pending' END,
           t.max_attempts, ${uniqueKey}, t.unique_states, t.concurrency_key, t.meta,
           ${QUEUE_NOW}, ${QUEUE_NOW}`;

const DUE = `CROSS JOIN LATERAL (
        SELECT COALESCE(t.run_at, ${QUEUE_NOW}
                                  + COALESCE(t.delay_ms, 0::float8) * interval '1 millisecond')
          AS run_at) AS due`;

/**
 * Rows without a key cannot conflict (the unique index skips NULL keys), and without the clause
 * each row is a plain insert instead of a speculative one, which is cheaper per row. Inserted
 * in input order, so the ids the sequence hands out ascend with it.
 */
const INSERT_UNKEYED = (schema: QueueSchema): string => `
  WITH inserted AS (
    INSERT INTO ${schema.jobs}
      (job_type, data, priority, run_at, status, max_attempts, unique_key, unique_states,
       concurrency_key, meta, created_at, updated_at)
    SELECT ${insertedColumns('t.unique_key')}
    FROM ${INPUT_ROWS}
      ${DUE}
    ORDER BY t.ordinality
    RETURNING id, unique_key
  )${INSERTED_IDS}`;

/**
 * Rows with keys: ids are drawn in input order first (`given`, materialised: one nextval per row,
 * so they still ascend with the input), then the rows go in ordered by their stored key (bytes,
 * `C`), which is where a row waits for another transaction's uncommitted entry of the same key.
 * Every batch takes its keys in that one order, so two batches naming the same keys wait for
 * each other in turn, never in a cycle (a deadlock). The conflict predicate is the unique
 * index's (`jobs_unique_key_idx`, AddUniquenessPolicies), word for word: a row whose key counts
 * in its status holds it.
 */
const INSERT_KEYED = (schema: QueueSchema): string => `
  WITH given AS MATERIALIZED (
    SELECT t.*, pg_catalog.nextval('${schema.quoted}.jobs_id_seq'::pg_catalog.regclass) AS id
    FROM ${INPUT_ROWS}
    ORDER BY t.ordinality
  ), inserted AS (
    INSERT INTO ${schema.jobs}
      (id, job_type, data, priority, run_at, status, max_attempts, unique_key, unique_states,
       concurrency_key, meta, created_at, updated_at)
    SELECT t.id, ${insertedColumns('k.stored_key')}
    FROM given AS t
      CROSS JOIN LATERAL (
        SELECT ${storedUniqueKeySql('t.unique_key', 't.window_ms', '$3')} AS stored_key
      ) AS k
      ${DUE}
    ORDER BY k.stored_key COLLATE pg_catalog."C", t.ordinality
    ON CONFLICT (unique_key) WHERE ${uniqueKeyCountsSql(schema)} DO NOTHING
    RETURNING id, unique_key
  )${INSERTED_IDS}`;

interface InsertResult {
  /** The ids inserted, ascending (the order of their input rows, see below), as `{1,2,3}`. */
  ids: string;
  /** Their stored unique keys, in the same order (`null` where a row had none); `null` if none had one. */
  keys: Array<string | null> | null;
  /** The queue's now: created_at and updated_at of every row, and run_at of the undelayed. */
  now: string;
}

/**
 * Inserts every row in one statement, whatever the count, each as `scheduled` when its `run_at`
 * is later than the queue's now (`now`, null: the statement's now(); the database's clock
 * decides, not this process's) and `pending` otherwise, and returns for each input position
 * its new `Job`, or `undefined` when its `uniqueKey` is held by a job whose key counts (ON
 * CONFLICT DO NOTHING; the caller looks the holder up).
 *
 * The input goes as one JSON document (`jsonb_to_recordset`) and only ids come back, not rows:
 * returning and parsing every column of 5,000 rows took half of `enqueueMany`'s time. Each
 * `Job` is built here from its input and the columns' defaults, with the queue's now.
 * Rows are inserted in input order, so the ids the sequence hands out ascend with it: the i-th
 * smallest id returned belongs to the i-th input row that was inserted.
 */
export async function insertJobs(
  db: Queryable,
  schema: string,
  rows: readonly JobInsertRow[],
  now: Date | null = null,
): Promise<Array<Job | undefined>> {
  const keyed = rows.some((row) => row.uniqueKey !== null);
  const statement = queueSchema(schema).statement(keyed ? INSERT_KEYED : INSERT_UNKEYED);
  const [result] = await queryRows<InsertResult>(db, statement, [
    inputDocument(rows),
    DEFAULT_PRIORITY,
    now,
  ]);
  return matchInserted(rows, result);
}

/**
 * `[{"type":…,"data":…}, …]`, reusing each row's already serialised `data`, with only the options
 * that differ from their defaults: the statement reads a missing key as NULL, then the default
 * (and a JSON null `data` as SQL NULL, hence its COALESCE). Leaving the defaults out halves the
 * document for the usual batch and took about a quarter off the statement's time. The numbers
 * are validated integers.
 */
function inputDocument(rows: readonly JobInsertRow[]): string {
  return `[${rows.map(jobInputItem).join(',')}]`;
}

/** One row of `inputDocument`: `{"type":…,"data":…}` and the options that are not defaults. */
export function jobInputItem(row: JobInsertRow): string {
  let item = `{"type":${JSON.stringify(row.jobType)},"data":${row.dataJson}`;
  if (row.priority !== DEFAULT_PRIORITY) item += `,"priority":${row.priority}`;
  if (row.runAt !== null) item += `,"run_at":"${timestamptzInput(row.runAt)}"`;
  if (row.delayMs !== 0) item += `,"delay_ms":${row.delayMs}`;
  if (row.maxAttempts !== null) item += `,"max_attempts":${row.maxAttempts}`;
  if (row.uniqueKey !== null) item += `,"unique_key":${JSON.stringify(row.uniqueKey)}`;
  if (row.uniqueStates !== null) item += `,"unique_states":${row.uniqueStates}`;
  if (row.uniqueWindowMs !== null) item += `,"window_ms":${row.uniqueWindowMs}`;
  if (row.concurrencyKey !== null) {
    item += `,"concurrency_key":${JSON.stringify(row.concurrencyKey)}`;
  }
  if (row.metaJson !== null) item += `,"meta":${row.metaJson}`;
  return item + '}';
}

/**
 * Walks the input in order against the ascending ids: an input row without a key was always
 * inserted; one with a key was inserted when the next id carries that key (with the row's
 * window: in one statement, one key and window length make one stored key), else skipped.
 */
function matchInserted(
  rows: readonly JobInsertRow[],
  result: InsertResult,
): Array<Job | undefined> {
  const { keys } = result;
  // Read as text and split: pg's array parser was a tenth of enqueueMany's own time.
  const ids = result.ids === '{}' ? [] : result.ids.slice(1, -1).split(',');
  const nowMs = parseTimestamptzText(result.now);
  let next = 0;
  return rows.map((row) => {
    if (next >= ids.length) return undefined;
    const stored = keys?.[next];
    if (
      row.uniqueKey !== null &&
      !isStoredUniqueKey(stored ?? '', row.uniqueKey, row.uniqueWindowMs)
    ) {
      return undefined;
    }
    return newJob(row, ids[next++], nowMs);
  });
}

/** The row as the INSERT wrote it: the given columns, and the table's defaults for the rest. */
function newJob(row: JobInsertRow, id: string, nowMs: number): Job {
  const job = new Job();
  job.id = id;
  job.jobType = row.jobType;
  job.priority = row.priority;
  job.runAt = new Date(row.runAt?.getTime() ?? nowMs + row.delayMs);
  // The status the statement chose: `scheduled` when run_at is after its now() (nowMs is that
  // now() cut to the millisecond, and run_at a whole millisecond or now() + delay: the same
  // comparison).
  job.status = job.runAt.getTime() > nowMs ? JobStatus.Scheduled : JobStatus.Pending;
  job.data = JSON.parse(row.dataJson) as unknown;
  job.progress = 0;
  job.currentStage = null;
  job.eventsCount = 0;
  job.workerId = null;
  job.claimedAt = null;
  job.createdAt = new Date(nowMs);
  job.startedAt = null;
  job.completedAt = null;
  job.attempts = 0;
  job.maxAttempts = row.maxAttempts;
  job.runToken = 0;
  job.backoffBaseMs = null;
  job.backoffMaxMs = null;
  job.backoffJitter = null;
  job.lastError = null;
  job.heartbeatAt = null;
  job.uniqueKey = row.uniqueKey;
  job.concurrencyKey = row.concurrencyKey;
  job.result = null;
  job.meta = row.metaJson === null ? null : (JSON.parse(row.metaJson) as Record<string, unknown>);
  job.flowId = null;
  job.stepName = null;
  job.unfinishedDependencies = 0;
  job.onDependencyFailure = null;
  job.hasDependants = false;
  job.updatedAt = new Date(nowMs);
  return job;
}

import { QueueSchema } from './queue-schema';
import { JobLogKind } from '../interfaces/job-log-entry.interface';
import { MAX_LOG_MESSAGE_CHARS } from '../job-queue.constants';

// The rows of `job_events` a statement of the queue writes beside the transition it makes: the
// rows travel as arrays (`jobLogRowParameters`) and are inserted only for the jobs whose write
// landed (`landed`, the statement's UPDATE ... RETURNING), so a superseded run writes none.

/** A row as a run writes it; the run's token comes from the job's row as the write leaves it. */
export interface JobLogRow {
  jobId: string;
  attempt: number;
  /** When it happened; null: the statement's `now()`. */
  at: Date | null;
  kind: JobLogKind;
  message: string | null;
  /** JSON text, checked like a payload (`ctx.log`) or built by the queue. */
  dataJson: string | null;
}

/** The six arrays `givenLogRowsCte` reads, in its placeholders' order. */
export function jobLogRowParameters(rows: readonly JobLogRow[]): unknown[] {
  return [
    rows.map((row) => row.jobId),
    rows.map((row) => row.attempt),
    rows.map((row) => row.at),
    rows.map((row) => row.kind),
    rows.map((row) => row.message),
    rows.map((row) => row.dataJson),
  ];
}

/** The types of the arrays `jobLogRowParameters` makes, in its order. */
const LOG_ROW_ARRAY_TYPES = ['bigint', 'integer', 'timestamptz', 'text', 'text', 'jsonb'];

/**
 * The CTE `log_rows`: the given rows (placeholders `$first` to `$first + 5`, as
 * `jobLogRowParameters` orders them) of the jobs in `landed` (a CTE with `id` and `run_token`),
 * each with the landed run's token, numbered in the order given.
 */
export function givenLogRowsCte(landed: string, first: number): string {
  const arrays = LOG_ROW_ARRAY_TYPES.map(
    (type, i) => `pg_catalog.unnest($${first + i}::${type}[])`,
  ).join(', ');
  return `
  log_rows AS (
    SELECT r.job_id, l.run_token, r.attempt, COALESCE(r.at, pg_catalog.now()) AS at, r.kind,
           r.message, r.data, r.n
    FROM ROWS FROM (${arrays})
      WITH ORDINALITY AS r(job_id, attempt, at, kind, message, data, n)
      JOIN ${landed} AS l ON l.id = r.job_id
  )`;
}

/**
 * The CTE `logged`: inserts `rows` (a query with the columns of `log_rows` and `n`) into the
 * schema's `job_events` in the order of `n`, which gives each job's rows their ids in that
 * order. A data-modifying CTE runs whether or not the statement reads it.
 */
export function insertLogRowsCte(schema: QueueSchema, rows: string): string {
  return `
  logged AS (
    INSERT INTO ${schema.jobEvents} (job_id, run_token, attempt, at, kind, message, data)
    SELECT job_id, run_token, attempt, at, kind, message, data FROM (${rows}) AS rows
    ORDER BY n
  )`;
}

/** The first line of an error text, as a lifecycle row's message carries it (SQL, of `text`). */
export function firstLineSql(text: string): string {
  return `pg_catalog.left(pg_catalog.split_part(${text}, E'\\n', 1), ${MAX_LOG_MESSAGE_CHARS})`;
}

/**
 * True when the run holding the job `j` (a job held by a worker has a `worker_id`) has no
 * `claimed` row yet: a run writes it with its first write, so a run cancelled or taken back
 * before any write has none, and the statement that ends it writes it (SQL over the row `j`).
 */
export const claimedRowMissingSql = (schema: QueueSchema): string =>
  `(j.worker_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM ${schema.jobEvents} e
      WHERE e.job_id = j.id AND e.run_token = j.run_token AND e.kind = 'claimed'))`;

/**
 * The rows a statement that ends a run from outside (cancel, rescue) writes for each job of
 * `ended` (a CTE with `id, run_token, attempts, claimed_at, worker_id` of the run, and
 * `claimed_missing`): the run's `claimed` row if it wrote none, then the row of `kind` with
 * `message` (SQL over `x`, the row of `ended`). Columns as `insertLogRowsCte` reads them.
 */
export function endedRunRowsSql(ended: string, kind: JobLogKind, message: string): string {
  return `
    SELECT x.id AS job_id, x.run_token, x.attempts AS attempt,
           COALESCE(x.claimed_at, pg_catalog.now()) AS at, 'claimed'::text AS kind,
           NULL::text AS message, pg_catalog.jsonb_build_object('workerId', x.worker_id) AS data,
           0 AS n
    FROM ${ended} AS x WHERE x.claimed_missing
    UNION ALL
    SELECT x.id, x.run_token, x.attempts, pg_catalog.now(), '${kind}'::text, ${message},
           NULL::jsonb, 1
    FROM ${ended} AS x`;
}

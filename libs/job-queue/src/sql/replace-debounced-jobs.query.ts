import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { queueNowSql } from './queue-now.sql';
import { storedUniqueKeySql, uniqueKeyCountsSql } from './unique-keys.sql';

/** A debounced enqueue: its type, its data's JSON, its key and window, and `debounceMs`. */
export interface DebouncedRow {
  jobType: string;
  dataJson: string;
  uniqueKey: string;
  uniqueWindowMs: number | null;
  debounceMs: number;
}

/**
 * Only a holder that has not started takes the new data: `scheduled`, `pending` or `waiting`
 * (set aside for its concurrency key, which it stays), and of the same type. A holder another
 * transaction writes (a claim) is waited for, then read again: once claimed it is no longer one
 * to replace. Rows in other statuses are not locked.
 */
const REPLACE_DEBOUNCED_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET
    data = COALESCE(t.data, 'null'::jsonb),
    run_at = ${queueNowSql('$2')} + t.debounce_ms * interval '1 millisecond',
    status = CASE WHEN j.status = 'waiting' THEN 'waiting'
                  WHEN t.debounce_ms > 0::float8 THEN 'scheduled' ELSE 'pending' END,
    updated_at = ${queueNowSql('$2')}
  FROM ROWS FROM (pg_catalog.jsonb_to_recordset($1::jsonb) AS (
         type text, data jsonb, unique_key text, window_ms bigint, debounce_ms float8))
       WITH ORDINALITY AS t
  WHERE j.unique_key = ${storedUniqueKeySql('t.unique_key', 't.window_ms', '$2')}
    AND ${uniqueKeyCountsSql(schema, 'j.')}
    AND j.status IN ('scheduled', 'pending', 'waiting') AND j.job_type = t.type
  RETURNING t.ordinality - 1::bigint AS "inputIndex", j.*`;

/**
 * Gives each debounced row's holder, when it has not started, the row's data and a `run_at` of
 * the queue's now (`now`; null: the statement's now()) + `debounceMs`, in one statement; returns
 * the replaced jobs by input position. The rows have distinct keys (`enqueueRows` sends one per
 * key).
 */
export async function replaceDebouncedJobs(
  db: Queryable,
  schema: string,
  rows: readonly DebouncedRow[],
  now: Date | null = null,
): Promise<Map<number, JobRow>> {
  const document = `[${rows
    .map(
      (row) =>
        `{"type":${JSON.stringify(row.jobType)},"data":${row.dataJson},` +
        `"unique_key":${JSON.stringify(row.uniqueKey)},"window_ms":${row.uniqueWindowMs},` +
        `"debounce_ms":${row.debounceMs}}`,
    )
    .join(',')}]`;
  const replaced = await queryRows(db, queueSchema(schema).statement(REPLACE_DEBOUNCED_JOBS), [
    document,
    now,
  ]);
  return new Map(replaced.map(({ inputIndex, ...row }) => [Number(inputIndex), row as JobRow]));
}

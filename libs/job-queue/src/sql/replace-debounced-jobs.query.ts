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
 * The key's debounce successor, when it has one, takes the new data (it stays `blocked` on its
 * holder; see insert-successor-jobs.query.ts): the last call's data is what runs after the
 * holder. Else only a holder that has not started takes it: `scheduled`, `pending` or `waiting`
 * (set aside for its concurrency key, which it stays), and of the same type. A holder another
 * transaction writes (a claim) is waited for, then read again: once claimed it is no longer one
 * to replace. Rows in other statuses are not locked.
 *
 * Each row's holder is looked up by its key (`held`, at most one: the key's index is unique), then
 * updated by id; the status is checked again on the row the update locks (a claim may have come
 * between). The LIMIT keeps the lookup a subquery per row, and the update joins by id only, so
 * the plan reads one key each whatever the statistics say: with the key compared in the update,
 * the planner could hash every unfinished keyed job instead (a CI run did, reading 238 blocks for
 * two rows).
 */
const REPLACE_DEBOUNCED_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET
    data = COALESCE(t.data, 'null'::jsonb),
    run_at = ${queueNowSql('$2')} + t.debounce_ms * interval '1 millisecond',
    status = CASE WHEN j.status IN ('waiting', 'blocked') THEN j.status
                  WHEN t.debounce_ms > 0::float8 THEN 'scheduled' ELSE 'pending' END,
    updated_at = ${queueNowSql('$2')}
  FROM (
    SELECT given.ordinality, given.data, given.debounce_ms, held.id
    FROM ROWS FROM (pg_catalog.jsonb_to_recordset($1::jsonb) AS (
           type text, data jsonb, unique_key text, window_ms bigint, debounce_ms float8))
         WITH ORDINALITY AS given
      CROSS JOIN LATERAL (
        SELECT ${storedUniqueKeySql('given.unique_key', 'given.window_ms', '$2')} AS stored_key
      ) AS k
      CROSS JOIN LATERAL (
        SELECT COALESCE((
          SELECT s.id FROM ${schema.jobs} AS s
          WHERE s.unique_key = k.stored_key AND s.status = 'blocked' AND s.unique_key IS NOT NULL
            AND s.job_type = given.type
          LIMIT 1
        ), (
          SELECT h.id FROM ${schema.jobs} AS h
          WHERE h.unique_key = k.stored_key AND ${uniqueKeyCountsSql(schema, 'h.')}
            AND h.status IN ('scheduled', 'pending', 'waiting') AND h.job_type = given.type
          LIMIT 1
        )) AS id
      ) AS held
  ) AS t
  WHERE j.id = t.id AND j.status IN ('scheduled', 'pending', 'waiting', 'blocked')
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

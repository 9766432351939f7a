import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { storedUniqueKeySql, uniqueKeyCountsSql } from './unique-keys.sql';

/** A caller's key and its window, as `insertJobs` stores it. */
export interface UniqueKeyOf {
  uniqueKey: string;
  uniqueWindowMs: number | null;
}

const FIND_UNIQUE_KEY_HOLDERS = (schema: QueueSchema): string => `
  SELECT j.* FROM ${schema.jobs} j
  WHERE j.unique_key IN (
      SELECT ${storedUniqueKeySql('k.unique_key', 'k.window_ms', '$2')}
      FROM pg_catalog.jsonb_to_recordset($1::jsonb) AS k(unique_key text, window_ms bigint))
    AND ${uniqueKeyCountsSql(schema, 'j.')}`;

/**
 * The jobs that hold these keys at the queue's now (`now`; null: the statement's now()), what a
 * duplicate enqueue returns: the rows of the unique
 * index, through its predicate, so every key an insert found taken has its holder here unless
 * it was freed since (a holder finished, or a window ended), which the caller tries again for.
 */
export function findUniqueKeyHolders(
  db: Queryable,
  schema: string,
  keys: readonly UniqueKeyOf[],
  now: Date | null = null,
): Promise<JobRow[]> {
  const document = JSON.stringify(
    keys.map(({ uniqueKey, uniqueWindowMs }) => ({
      unique_key: uniqueKey,
      window_ms: uniqueWindowMs,
    })),
  );
  return queryRows(db, queueSchema(schema).statement(FIND_UNIQUE_KEY_HOLDERS), [document, now]);
}

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

const FIND_HOLDER_OF_STORED_KEY = (schema: QueueSchema): string => `
  SELECT j.* FROM ${schema.jobs} j
  WHERE j.unique_key = $1::text AND j.id <> $2::bigint AND ${uniqueKeyCountsSql(schema, 'j.')}
  LIMIT 1`;

/**
 * The job other than `jobId` that holds the stored key `storedKey` (as a row has it, window
 * included), through the unique index: what keeps `jobId` from taking it back (a retry).
 */
export async function findHolderOfStoredKey(
  db: Queryable,
  schema: string,
  storedKey: string,
  jobId: string,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, queueSchema(schema).statement(FIND_HOLDER_OF_STORED_KEY), [
    storedKey,
    jobId,
  ]);
  return row;
}

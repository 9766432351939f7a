import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const FIND_UNFINISHED_BY_UNIQUE_KEYS = (schema: QueueSchema): string => `
  SELECT * FROM ${schema.jobs}
  WHERE unique_key = ANY($1::text[])
    AND status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')`;

/**
 * The unfinished jobs holding these unique keys (what a duplicate enqueue returns): the statuses
 * of the unique index's predicate, so every key an insert found taken has its holder here.
 */
export function findUnfinishedByUniqueKeys(
  db: Queryable,
  schema: string,
  uniqueKeys: readonly string[],
): Promise<JobRow[]> {
  return queryRows(db, queueSchema(schema).statement(FIND_UNFINISHED_BY_UNIQUE_KEYS), [uniqueKeys]);
}

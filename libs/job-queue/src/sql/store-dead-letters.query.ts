import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

export interface TypeDeadLetter {
  jobType: string;
  /** The handler's `deadLetter`; `null`: none. */
  deadLetterType: string | null;
}

// Only `dead_letter_type`: other per-type settings on the row are left alone. A row that already
// holds the value is not written again, and a type without a dead-letter type gets no row for it
// (a type with no row has none). Returns the types whose value this wrote.
const STORE_DEAD_LETTERS = (schema: QueueSchema): string => `
  INSERT INTO ${schema.jobTypes} AS t (job_type, dead_letter_type)
  SELECT g.job_type, g.dead_letter_type
  FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]))
    AS g(job_type, dead_letter_type)
  WHERE g.dead_letter_type IS NOT NULL
     OR EXISTS (SELECT 1 FROM ${schema.jobTypes} e
                WHERE e.job_type = g.job_type AND e.dead_letter_type IS NOT NULL)
  ORDER BY g.job_type
  ON CONFLICT (job_type) DO UPDATE SET
    dead_letter_type = EXCLUDED.dead_letter_type,
    updated_at = pg_catalog.now()
  WHERE t.dead_letter_type IS DISTINCT FROM EXCLUDED.dead_letter_type
  RETURNING t.job_type, t.dead_letter_type`;

/**
 * Stores each type's dead-letter type in `job_types` (one statement for all), where the trigger
 * `jobs_dead_lettered` reads it whichever node fails the job: the last worker to start with a
 * handler for a type decides. A handler without `deadLetter` clears it. Rows are written in the
 * order of their names, as every boot writes them. Returns the types whose value it changed.
 */
export async function storeDeadLetters(
  db: Queryable,
  schemaName: string,
  types: readonly TypeDeadLetter[],
): Promise<TypeDeadLetter[]> {
  if (types.length === 0) return [];
  const rows = await queryRows<{ job_type: string; dead_letter_type: string | null }>(
    db,
    queueSchema(schemaName).statement(STORE_DEAD_LETTERS),
    [types.map((t) => t.jobType), types.map((t) => t.deadLetterType)],
  );
  return rows.map((row) => ({ jobType: row.job_type, deadLetterType: row.dead_letter_type }));
}

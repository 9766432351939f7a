import { Job } from '../entities/job.entity';
import { jobColumns } from './job-columns';
import { callerUniqueKey } from './unique-keys.sql';

/**
 * Anything that runs SQL for us: the app's `DataSource`, an `EntityManager` (possibly inside the
 * caller's transaction) or a `QueryRunner`. Each query function in this folder takes one.
 */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export type JobRow = Record<string, unknown>;

/**
 * The rows of a statement. NOTE: TypeORM's Postgres driver returns `[rows, rowCount]` for
 * UPDATE and DELETE but plain `rows` for SELECT and INSERT; rows are objects, never arrays,
 * so the two shapes cannot be confused.
 */
export async function queryRows<T = JobRow>(
  db: Queryable,
  sql: string,
  parameters: unknown[],
): Promise<T[]> {
  const result = await db.query(sql, parameters);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0])) {
    return result[0] as T[];
  }
  return result as T[];
}

/**
 * Turns a raw `jobs` row into a `Job`, renaming columns to properties (see `jobColumns`). The pg
 * driver already parses timestamptz, jsonb and integers; bigint `id` stays a string. A column
 * the row lacks is left unset.
 */
export function toJob(row: JobRow): Job {
  const job = new Job() as unknown as Record<string, unknown>;
  for (const { column, property } of jobColumns()) {
    if (column in row) job[property] = row[column];
  }
  // The row stores the key with its window, if any; the job shows the caller's key.
  if (typeof job.uniqueKey === 'string') job.uniqueKey = callerUniqueKey(job.uniqueKey);
  return job as unknown as Job;
}

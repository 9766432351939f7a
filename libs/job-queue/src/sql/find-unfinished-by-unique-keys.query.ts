import { Queryable, queryRows, JobRow } from './queryable';

/** The unfinished jobs holding these unique keys (what a duplicate enqueue returns). */
export function findUnfinishedByUniqueKeys(
  db: Queryable,
  uniqueKeys: readonly string[],
): Promise<JobRow[]> {
  return queryRows(
    db,
    `SELECT * FROM jobs
     WHERE unique_key = ANY($1::varchar[]) AND status IN ('pending', 'claimed', 'running')`,
    [uniqueKeys],
  );
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** A dependency as its dependant's insert found it, locked. */
export interface LockedDependency {
  id: string;
  job_type: string;
  status: string;
}

/*
 * A row lock on each dependency (an UPDATE takes FOR NO KEY UPDATE, in id order: the index scan
 * of `= ANY` reads the ids sorted), held until the dependant's transaction ends, with
 * `has_dependants` set so that the finishing of each one fires `jobs_dependency_finished`. A
 * share lock (FOR KEY SHARE or FOR SHARE) would not set the flag, and FOR KEY SHARE would not
 * even wait for the UPDATE that finishes the job (it takes FOR NO KEY UPDATE, which does not
 * conflict with it). With this lock, a dependency finishing at the same time either committed
 * first (this UPDATE waits, then returns its finished status) or waits for the dependant to
 * commit (and its trigger then sees the new edge).
 */
const LOCK_DEPENDENCIES = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS d SET has_dependants = true
  WHERE d.id = ANY ($1::bigint[])
  RETURNING d.id::text AS id, d.job_type, d.status`;

/** Locks the jobs `ids` for a dependant's insert and returns those that exist. */
export function lockDependencies(
  db: Queryable,
  schema: string,
  ids: readonly string[],
): Promise<LockedDependency[]> {
  return queryRows<LockedDependency>(db, queueSchema(schema).statement(LOCK_DEPENDENCIES), [ids]);
}

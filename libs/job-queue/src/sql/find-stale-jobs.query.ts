import { Queryable, queryRows, JobRow } from './queryable';

/**
 * Jobs held (claimed or running) whose row has not changed for `olderThanMs`: no progress, no
 * state change since at least then (a claim sets `updated_at`, so they were claimed before it too).
 * Heartbeats do not count as a change, so a hung handler on a live worker shows up as well.
 * The seed's "claimed for more than 10 minutes and not changed" question.
 */
export function findStaleJobRows(db: Queryable, olderThanMs: number): Promise<JobRow[]> {
  return queryRows(
    db,
    `SELECT * FROM jobs
     WHERE status IN ('claimed', 'running') AND updated_at < now() - $1 * interval '1 millisecond'
     ORDER BY updated_at, id`,
    [olderThanMs],
  );
}

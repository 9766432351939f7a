import { Queryable, queryRows, JobRow } from './queryable';

/**
 * Puts a failed or cancelled job back to `pending` with a fresh set of attempts, to run now.
 * Returns nothing when no such job exists, or when its `unique_key` is now held by another
 * unfinished job (the unique index refuses; the caller reports the conflict).
 */
export async function retryJobRow(db: Queryable, id: string): Promise<JobRow | undefined> {
  const [row] = await queryRows(
    db,
    `UPDATE jobs SET
       status = 'pending', attempts = 0, run_at = now(), worker_id = NULL, claimed_at = NULL,
       heartbeat_at = NULL, started_at = NULL, completed_at = NULL, updated_at = now()
     WHERE id = $1 AND status IN ('failed', 'cancelled')
       AND NOT EXISTS (
         SELECT 1 FROM jobs holder
         WHERE holder.unique_key = jobs.unique_key
           AND holder.status IN ('pending', 'claimed', 'running'))
     RETURNING *`,
    [id],
  );
  return row;
}

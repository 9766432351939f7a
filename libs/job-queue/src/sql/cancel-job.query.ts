import { JOBS_CANCELLED_CHANNEL } from '../job-queue.constants';
import { Queryable, queryRows, JobRow } from './queryable';

/**
 * Cancels an unfinished job; returns its row, or nothing when no unfinished job has that id.
 *
 * The same statement notifies `JOBS_CANCELLED_CHANNEL` with `<id>:<run_token>`: the worker that
 * runs that run (if any) gets it on its LISTEN connection when the cancel commits and aborts
 * exactly that run at once, instead of at its next heartbeat. The status is `cancelled` from the
 * commit on; the run that was cancelled is fenced by it (and by any later claim's new token).
 */
export async function cancelJobRow(db: Queryable, id: string): Promise<JobRow | undefined> {
  const [row] = await queryRows(
    db,
    `WITH cancelled AS (
       UPDATE jobs SET status = 'cancelled', completed_at = now(), updated_at = now()
       WHERE id = $1 AND status IN ('pending', 'claimed', 'running')
       RETURNING *
     )
     SELECT cancelled.* FROM cancelled
       CROSS JOIN LATERAL pg_notify($2, cancelled.id || ':' || cancelled.run_token) AS notified`,
    [id, JOBS_CANCELLED_CHANNEL],
  );
  return row;
}

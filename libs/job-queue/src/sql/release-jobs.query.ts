import { Queryable, queryRows } from './queryable';

/**
 * On shutdown: hands every job this worker still holds back to `pending`, to run now, and gives
 * back the attempt the claim took (the job did not fail; the worker left).
 */
export async function releaseWorkerJobs(db: Queryable, workerId: string): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    `UPDATE jobs SET
       status = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL,
       started_at = NULL, attempts = GREATEST(attempts - 1, 0), run_at = now(), updated_at = now()
     WHERE worker_id = $1 AND status IN ('claimed', 'running')
     RETURNING id`,
    [workerId],
  );
  return rows.map((row) => String(row.id));
}

import { Queryable, queryRows } from './queryable';

/** Claimed → running for a batch this worker just claimed, in one statement. */
export async function markJobsRunning(
  db: Queryable,
  workerId: string,
  ids: readonly string[],
): Promise<void> {
  await queryRows(
    db,
    `UPDATE jobs SET status = 'running', started_at = now(), updated_at = now()
     WHERE id = ANY($1::bigint[]) AND worker_id = $2 AND status = 'claimed'`,
    [ids, workerId],
  );
}

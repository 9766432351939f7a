import { Queryable, queryRows } from './queryable';

/**
 * Renews the lease of every job this worker runs, in one statement. Returns the ids still held:
 * a running id missing from the answer was cancelled or taken back, and its handler is aborted.
 * It does not touch `updated_at`: a heartbeat is not progress (see findStale).
 */
export async function heartbeatJobs(
  db: Queryable,
  workerId: string,
  ids: readonly string[],
): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    `UPDATE jobs SET heartbeat_at = now()
     WHERE id = ANY($1::bigint[]) AND worker_id = $2 AND status IN ('claimed', 'running')
     RETURNING id`,
    [ids, workerId],
  );
  return rows.map((row) => String(row.id));
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const RELEASE_WORKER_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET
    status = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL,
    started_at = NULL, attempts = GREATEST(attempts - 1, 0), run_at = pg_catalog.now(),
    updated_at = pg_catalog.now()
  WHERE worker_id = $1::text AND status IN ('claimed', 'running')
  RETURNING id`;

/**
 * On shutdown: hands every job this worker still holds back to `pending`, to run now, and gives
 * back the attempt the claim took (the job did not fail; the worker left).
 */
export async function releaseWorkerJobs(
  db: Queryable,
  schema: string,
  workerId: string,
): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    queueSchema(schema).statement(RELEASE_WORKER_JOBS),
    [workerId],
  );
  return rows.map((row) => String(row.id));
}

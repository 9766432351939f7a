import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** A run to renew: the job's id and the run's fencing token. */
export interface HeartbeatRun {
  id: string;
  token: number;
}

const HEARTBEAT_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET heartbeat_at = pg_catalog.now()
  FROM ROWS FROM (pg_catalog.unnest($1::bigint[]), pg_catalog.unnest($2::integer[])) AS r(id, token)
  WHERE j.id = r.id AND j.run_token = r.token AND j.worker_id = $3::text
    AND j.status IN ('claimed', 'running')
  RETURNING j.id::text || ':' || j.run_token::text AS run`;

/**
 * Renews the lease of every run this worker holds, in one statement. A run's lease is renewed
 * only while the job is still held by that very run (same fencing token, same worker, claimed or
 * running). Returns the runs still held, as `id:token`: a run missing from the answer was
 * cancelled, retried or taken back since, and its handler is aborted.
 * It does not touch `updated_at`: a heartbeat is not progress (see findStale).
 */
export async function heartbeatJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  runs: readonly HeartbeatRun[],
): Promise<string[]> {
  const rows = await queryRows<{ run: string }>(db, queueSchema(schema).statement(HEARTBEAT_JOBS), [
    runs.map((run) => run.id),
    runs.map((run) => run.token),
    workerId,
  ]);
  return rows.map((row) => row.run);
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** A run to hand back: the job's id and the run's fencing token. */
export interface ReleaseRun {
  id: string;
  token: number;
}

const RELEASED_SET = `
    status = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL,
    started_at = NULL, attempts = GREATEST(attempts - 1, 0), run_at = pg_catalog.now(),
    updated_at = pg_catalog.now()`;

const RELEASE_WORKER_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET ${RELEASED_SET}
  WHERE worker_id = $1::text AND status IN ('claimed', 'running')
  RETURNING id`;

const RELEASE_RUNS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET ${RELEASED_SET}
  FROM ROWS FROM (pg_catalog.unnest($2::bigint[]), pg_catalog.unnest($3::integer[])) AS r(id, token)
  WHERE j.id = r.id AND j.run_token = r.token AND j.worker_id = $1::text
    AND j.status IN ('claimed', 'running')
  RETURNING j.id`;

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

/**
 * Hands these runs back as shutdown does (`pending`, to run now, the attempt given back), each
 * only while that very run still holds its job (same fencing token, this worker, claimed or
 * running): a job another node took back meanwhile is left as it is. Returns the ids handed back.
 */
export async function releaseRuns(
  db: Queryable,
  schema: string,
  workerId: string,
  runs: readonly ReleaseRun[],
): Promise<string[]> {
  if (runs.length === 0) return [];
  const rows = await queryRows<{ id: string }>(db, queueSchema(schema).statement(RELEASE_RUNS), [
    workerId,
    runs.map((run) => run.id),
    runs.map((run) => run.token),
  ]);
  return rows.map((row) => String(row.id));
}

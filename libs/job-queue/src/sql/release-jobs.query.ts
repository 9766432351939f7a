import { Queryable, queryRows } from './queryable';
import { PENDING_AGAIN_PAYLOAD, QueueSchema, queueSchema } from './queue-schema';

/** A run to hand back: the job's id and the run's fencing token. */
export interface ReleaseRun {
  id: string;
  token: number;
}

const RELEASED_SET = `
    status = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL,
    started_at = NULL, attempts = GREATEST(attempts - 1, 0), run_at = pg_catalog.now(),
    updated_at = pg_catalog.now()`;

/**
 * The released ids, and one notification on the insert channel when there are any, as the
 * stager sends: idle workers elsewhere claim them at once, from the heads of the queues (their
 * place is behind where claims resume). Without it, a job handed back by a busy worker (see
 * `HoardedJobsWatch`) would wait for an idle worker's next poll.
 */
const NOTIFY_RELEASED = `
  ), notified AS (
    SELECT pg_catalog.pg_notify($2::text, $3::text)
    FROM (SELECT 1 FROM released LIMIT 1) AS any_released
  )
  SELECT released.id FROM released LEFT JOIN notified ON true`;

const RELEASE_WORKER_JOBS = (schema: QueueSchema): string => `
  WITH released AS (
    UPDATE ${schema.jobs} SET ${RELEASED_SET}
    WHERE worker_id = $1::text AND status IN ('claimed', 'running')
    RETURNING id${NOTIFY_RELEASED}`;

const RELEASE_RUNS = (schema: QueueSchema): string => `
  WITH released AS (
    UPDATE ${schema.jobs} AS j SET ${RELEASED_SET}
    FROM ROWS FROM (pg_catalog.unnest($4::bigint[]), pg_catalog.unnest($5::integer[]))
      AS r(id, token)
    WHERE j.id = r.id AND j.run_token = r.token AND j.worker_id = $1::text
      AND j.status IN ('claimed', 'running')
    RETURNING j.id${NOTIFY_RELEASED}`;

/**
 * On shutdown: hands every job this worker still holds back to `pending`, to run now, and gives
 * back the attempt the claim took (the job did not fail; the worker left).
 */
export async function releaseWorkerJobs(
  db: Queryable,
  schema: string,
  workerId: string,
): Promise<string[]> {
  const queue = queueSchema(schema);
  const rows = await queryRows<{ id: string }>(db, queue.statement(RELEASE_WORKER_JOBS), [
    workerId,
    queue.insertedChannel,
    PENDING_AGAIN_PAYLOAD,
  ]);
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
  const queue = queueSchema(schema);
  const rows = await queryRows<{ id: string }>(db, queue.statement(RELEASE_RUNS), [
    workerId,
    queue.insertedChannel,
    PENDING_AGAIN_PAYLOAD,
    runs.map((run) => run.id),
    runs.map((run) => run.token),
  ]);
  return rows.map((row) => String(row.id));
}

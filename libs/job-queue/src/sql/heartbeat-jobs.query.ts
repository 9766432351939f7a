import { Queryable, queryRows } from './queryable';
import { integerArrayText } from './integer-array-text';
import { QueueSchema, queueSchema } from './queue-schema';

/** A run to renew: the job's id and the run's fencing token. */
export interface HeartbeatRun {
  id: string;
  token: number;
}

/** What one heartbeat learnt: the runs still held, and which of them are of a paused type. */
export interface HeartbeatAnswer {
  /** `id:token` of every run whose lease was renewed. */
  held: Set<string>;
  /** `id:token` of the renewed runs whose type is paused now. */
  paused: Set<string>;
}

const HEARTBEAT_JOBS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} AS j SET heartbeat_at = pg_catalog.now()
  FROM ROWS FROM (pg_catalog.unnest($1::bigint[]), pg_catalog.unnest($2::integer[])) AS r(id, token)
  WHERE j.id = r.id AND j.run_token = r.token AND j.worker_id = $3::text
    AND j.status IN ('claimed', 'running')
  RETURNING j.id::text || ':' || j.run_token::text AS run,
    EXISTS (SELECT FROM ${schema.jobTypes} AS t
            WHERE t.job_type = j.job_type AND t.paused_at IS NOT NULL) AS paused`;

/**
 * Renews the lease of every run this worker holds, in one statement. A run's lease is renewed
 * only while the job is still held by that very run (same fencing token, same worker, claimed or
 * running). A run missing from `held` was cancelled, retried or taken back since, and its handler
 * is aborted; `paused` lets a worker whose LISTEN is off learn of a pause (one primary-key look-up
 * in `job_types` per run). It does not touch `updated_at`: a heartbeat is not progress (see
 * findStale).
 */
export async function heartbeatJobs(
  db: Queryable,
  schema: string,
  workerId: string,
  runs: readonly HeartbeatRun[],
): Promise<HeartbeatAnswer> {
  const rows = await queryRows<{ run: string; paused: boolean }>(
    db,
    queueSchema(schema).statement(HEARTBEAT_JOBS),
    [
      integerArrayText(runs.map((run) => run.id)),
      integerArrayText(runs.map((run) => run.token)),
      workerId,
    ],
  );
  const answer: HeartbeatAnswer = { held: new Set(), paused: new Set() };
  for (const row of rows) {
    answer.held.add(row.run);
    if (row.paused) answer.paused.add(row.run);
  }
  return answer;
}

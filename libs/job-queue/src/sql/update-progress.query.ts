import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const UPDATE_PROGRESS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET
    progress = $2::smallint,
    current_stage = CASE WHEN $3::boolean THEN $4::text ELSE current_stage END,
    events_count = events_count + 1,
    updated_at = pg_catalog.now()
  WHERE id = $1::bigint AND status IN ('scheduled', 'pending', 'claimed', 'running')
  RETURNING *`;

const UPDATE_RUN_PROGRESS = (schema: QueueSchema): string => `
  UPDATE ${schema.jobs} SET
    progress = $3::smallint,
    current_stage = CASE WHEN $4::boolean THEN $5::text ELSE current_stage END,
    events_count = events_count + 1,
    updated_at = pg_catalog.now()
  WHERE id = $1::bigint AND run_token = $2::integer AND status IN ('claimed', 'running')
  RETURNING id`;

/**
 * Records progress (and the stage, when given) on an unfinished job, whichever run holds it: a
 * management call (`QueueService.updateProgress`), not a run's. Returns the job's row, or nothing
 * when no unfinished job has that id.
 */
export async function updateProgressRow(
  db: Queryable,
  schema: string,
  id: string,
  progress: number,
  stage: string | undefined,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, queueSchema(schema).statement(UPDATE_PROGRESS), [
    id,
    progress,
    stage !== undefined,
    stage ?? null,
  ]);
  return row;
}

/**
 * Records progress for one run of a job (`ctx.progress`): only while the job is still held by
 * that run (same fencing token, claimed or running). Returns false when it changed nothing: the
 * job was cancelled, retried or taken back since the run was claimed.
 */
export async function updateRunProgress(
  db: Queryable,
  schema: string,
  id: string,
  runToken: number,
  progress: number,
  stage: string | undefined,
): Promise<boolean> {
  const rows = await queryRows(db, queueSchema(schema).statement(UPDATE_RUN_PROGRESS), [
    id,
    runToken,
    progress,
    stage !== undefined,
    stage ?? null,
  ]);
  return rows.length > 0;
}

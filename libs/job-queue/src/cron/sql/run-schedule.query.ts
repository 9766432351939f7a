import { JobRow, Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';
import { queueNowSql } from '../../sql/queue-now.sql';

const QUEUE_NOW = queueNowSql('$2');

// The job a fire inserts (fire-schedule.query.ts), from the same columns of the schedule's row,
// due and dated at the queue's now as an enqueue's is; nothing is written to the schedule.
const RUN_SCHEDULE = (schema: QueueSchema): string => `
  INSERT INTO ${schema.jobs}
    (job_type, data, priority, max_attempts, run_at, status, created_at, updated_at, meta)
  SELECT s.job_type, s.data, s.priority, s.max_attempts, ${QUEUE_NOW}, 'pending', ${QUEUE_NOW},
         ${QUEUE_NOW}, $3::jsonb
  FROM ${schema.jobSchedules} AS s
  WHERE s.name = $1::text
  RETURNING *`;

/**
 * Enqueues the job the schedule `name` enqueues at a fire, due now (the queue's clock, `now`;
 * null: the database's), with `metaJson` as its `meta`, leaving its next and last fire times as
 * they are. `undefined` when no schedule has the name.
 */
export async function runSchedule(
  db: Queryable,
  schemaName: string,
  name: string,
  now: Date | null,
  metaJson: string | null,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, queueSchema(schemaName).statement(RUN_SCHEDULE), [
    name,
    now,
    metaJson,
  ]);
  return row;
}

const SCHEDULE_JOB_TYPE = (schema: QueueSchema): string => `
  SELECT s.job_type FROM ${schema.jobSchedules} AS s WHERE s.name = $1::text`;

/** The type of the schedule `name`'s jobs, or `undefined` when no schedule has the name. */
export async function scheduleJobType(
  db: Queryable,
  schemaName: string,
  name: string,
): Promise<string | undefined> {
  const [row] = await queryRows<{ job_type: string }>(
    db,
    queueSchema(schemaName).statement(SCHEDULE_JOB_TYPE),
    [name],
  );
  return row?.job_type;
}

import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';
import { ScheduleRow, SCHEDULE_COLUMNS } from './schedule-columns';

/** One schedule to write, already checked; `dataJson` is its data's JSON text. */
export interface ScheduleInsertRow {
  name: string;
  cron: string;
  timezone: string;
  catchUp: string;
  jobType: string;
  dataJson: string;
  priority: number;
  maxAttempts: number | null;
  source: 'handler' | 'schedule';
  /** The first fire time after now, used only when the cron or zone is new or changed. */
  nextFireAt: Date | null;
}

// A row whose cron and zone stay the same keeps its next_fire_at, so writing a schedule again
// (every boot does for handlers) neither skips nor repeats a fire time, and fire times missed
// while no node ran are still caught up. A schedule() call leaves a handler's row alone (the
// WHERE): it then returns nothing and the caller says why.
const UPSERT_SCHEDULE = (schema: QueueSchema): string => `
  INSERT INTO ${schema.jobSchedules} AS s
    (name, cron, timezone, catch_up, job_type, data, priority, max_attempts, source, next_fire_at)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::integer, $8::integer,
          $9::text, $10::timestamptz)
  ON CONFLICT (name) DO UPDATE SET
    next_fire_at = CASE WHEN s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone
                        THEN s.next_fire_at ELSE EXCLUDED.next_fire_at END,
    cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, catch_up = EXCLUDED.catch_up,
    job_type = EXCLUDED.job_type, data = EXCLUDED.data, priority = EXCLUDED.priority,
    max_attempts = EXCLUDED.max_attempts, source = EXCLUDED.source,
    updated_at = pg_catalog.now()
  WHERE s.source = 'schedule' OR EXCLUDED.source = 'handler'
  RETURNING ${SCHEDULE_COLUMNS}`;

/**
 * Creates the schedule or replaces the one of that name (see above for what it keeps). Returns
 * the row, or `undefined` when a `schedule()` call met a handler's schedule of that name.
 */
export async function upsertSchedule(
  db: Queryable,
  schemaName: string,
  row: ScheduleInsertRow,
): Promise<ScheduleRow | undefined> {
  const schema = queueSchema(schemaName);
  const [written] = await queryRows<ScheduleRow>(db, schema.statement(UPSERT_SCHEDULE), [
    row.name,
    row.cron,
    row.timezone,
    row.catchUp,
    row.jobType,
    row.dataJson,
    row.priority,
    row.maxAttempts,
    row.source,
    row.nextFireAt,
  ]);
  return written;
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** Most schedules one tick reads: more that are due wait for the next tick. */
export const DUE_SCHEDULES_LIMIT = 100;

/** A due schedule as a tick reads it, with the `now` it was due by. */
export interface DueScheduleRow {
  name: string;
  cron: string;
  timezone: string;
  catch_up: string;
  /** Cut to milliseconds, as a Date holds it: `fireSchedule` compares it the same way. */
  next_fire_at: Date;
  now: Date;
}

const DUE_SCHEDULES = (schema: QueueSchema): string => `
  SELECT s.name, s.cron, s.timezone, s.catch_up,
         pg_catalog.date_trunc('milliseconds'::text, s.next_fire_at) AS next_fire_at, t.now
  FROM (SELECT COALESCE($1::timestamptz, pg_catalog.now()) AS now) AS t
    JOIN ${schema.jobSchedules} s ON s.next_fire_at <= t.now
  ORDER BY s.next_fire_at, s.name
  LIMIT $2::integer`;

/**
 * The schedules whose next fire time has come by `now` (the database's now() when null: tests
 * move time by passing one), earliest first, through `job_schedules_next_fire_at_idx`.
 */
export function dueSchedules(
  db: Queryable,
  schemaName: string,
  now: Date | null,
  limit = DUE_SCHEDULES_LIMIT,
): Promise<DueScheduleRow[]> {
  const schema = queueSchema(schemaName);
  return queryRows<DueScheduleRow>(db, schema.statement(DUE_SCHEDULES), [now, limit]);
}

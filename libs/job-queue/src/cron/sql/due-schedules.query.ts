import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';

/** Most schedules one page of a tick reads; a full page means the tick reads another. */
export const DUE_SCHEDULES_LIMIT = 100;

/** Where a page of due schedules ends: the next page starts after it. */
export interface DueSchedulesCursor {
  /** The last row's `next_fire_at` as the database wrote it (microseconds kept). */
  position: string;
  name: string;
}

/** Before every row: names are never blank, and nothing sorts before -infinity. */
export const FIRST_DUE_PAGE: DueSchedulesCursor = { position: '-infinity', name: '' };

/** A due schedule as a tick reads it. */
export interface DueScheduleRow {
  name: string;
  cron: string;
  timezone: string;
  catch_up: string;
  /** The type its jobs get, as read: what the instruments are told a fire will enqueue. */
  job_type: string;
  /** Cut to milliseconds, as a Date holds it: `fireSchedule` compares it the same way. */
  next_fire_at: Date;
  /** `next_fire_at` exactly, as text: the cursor, so a row is never read twice in one tick. */
  position: string;
}

// Keyset pages in (next_fire_at, name) order: a row this node could not plan, or that another
// node fired meanwhile, is passed by the cursor, never read again by the same tick.
const DUE_SCHEDULES = (schema: QueueSchema): string => `
  SELECT s.name, s.cron, s.timezone, s.catch_up, s.job_type,
         pg_catalog.date_trunc('milliseconds'::text, s.next_fire_at) AS next_fire_at,
         s.next_fire_at::text AS position
  FROM ${schema.jobSchedules} s
  WHERE s.next_fire_at <= $1::timestamptz
    AND (s.next_fire_at, s.name) > ($2::timestamptz, $3::text)
  ORDER BY s.next_fire_at, s.name
  LIMIT $4::integer`;

/**
 * One page of the schedules whose next fire time has come by `now`, after `cursor`, earliest
 * first: fewer than `limit` rows means the last page.
 */
export function dueSchedules(
  db: Queryable,
  schemaName: string,
  now: Date,
  cursor: DueSchedulesCursor,
  limit = DUE_SCHEDULES_LIMIT,
): Promise<DueScheduleRow[]> {
  const schema = queueSchema(schemaName);
  return queryRows<DueScheduleRow>(db, schema.statement(DUE_SCHEDULES), [
    now,
    cursor.position,
    cursor.name,
    limit,
  ]);
}

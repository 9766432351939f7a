import { CatchUp, JobSchedule } from '../../interfaces/schedule-options.interface';

/** A `job_schedules` row as the statements return it. */
export interface ScheduleRow {
  name: string;
  cron: string;
  timezone: string;
  catch_up: string;
  job_type: string;
  data: unknown;
  priority: number;
  max_attempts: number | null;
  source: 'handler' | 'schedule';
  next_fire_at: Date | null;
  last_fire_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns every statement that returns schedules returns (constant text, no input). */
export const SCHEDULE_COLUMNS =
  'name, cron, timezone, catch_up, job_type, data, priority, max_attempts, source, ' +
  'next_fire_at, last_fire_at, created_at, updated_at';

/** A row as the public `JobSchedule`. */
export function toJobSchedule(row: ScheduleRow): JobSchedule {
  return {
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    catchUp: row.catch_up as CatchUp,
    jobType: row.job_type,
    data: row.data,
    priority: row.priority,
    maxAttempts: row.max_attempts,
    source: row.source,
    nextFireAt: row.next_fire_at,
    lastFireAt: row.last_fire_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

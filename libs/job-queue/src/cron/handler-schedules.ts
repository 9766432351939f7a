import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { Queryable } from '../sql/queryable';
import { databaseNow } from '../sql/database-now.query';
import { upsertSchedule } from './sql/upsert-schedule.query';
import { deleteHandlerSchedules } from './sql/delete-schedules.query';
import { cronTimes, HandlerSchedule } from './cron-expression';

/** What a boot's sync reads of a `@JobHandler`: its type and its checked schedule, if any. */
export interface ScheduledHandler {
  jobType: string;
  options: { schedule: HandlerSchedule | undefined };
}

/** What a boot changed: the handler schedules it wrote, and those it deleted. */
export interface HandlerScheduleSync {
  written: string[];
  deleted: string[];
}

/**
 * Brings the handler-made schedules in line with this node's `@JobHandler`s, at boot: each
 * handler with `cron` writes its schedule (named after its job type; the same cron and zone keep
 * their next fire time), and each handler without one deletes the handler-made schedule of its
 * type, so removing `cron` removes the schedule on the next deploy. Types this node has no
 * handler for are left alone: another deployment may own them. When two deployments disagree on
 * a handler's cron, the last to boot wins, and every node fires what the table holds. A new or
 * changed schedule starts at its first fire time after the database's now (read once), never
 * after this node's clock: a node running ahead would skip a fire time, one behind would find it
 * due, and missed, at once.
 */
export async function syncHandlerSchedules(
  db: Queryable,
  schema: string,
  handlers: readonly ScheduledHandler[],
): Promise<HandlerScheduleSync> {
  const written: string[] = [];
  const scheduled = handlers.flatMap(({ jobType, options }) =>
    options.schedule ? [{ jobType, schedule: options.schedule }] : [],
  );
  if (scheduled.length > 0) {
    const now = await databaseNow(db);
    for (const { jobType, schedule } of scheduled) {
      await upsertSchedule(db, schema, {
        name: jobType,
        ...schedule,
        jobType,
        dataJson: 'null',
        priority: DEFAULT_PRIORITY,
        maxAttempts: null,
        source: 'handler',
        nextFireAt: cronTimes(schedule).next(now),
      });
      written.push(jobType);
    }
  }
  const without = handlers.filter((handler) => !handler.options.schedule);
  const deleted =
    without.length === 0
      ? []
      : await deleteHandlerSchedules(
          db,
          schema,
          without.map((handler) => handler.jobType),
        );
  return { written, deleted };
}

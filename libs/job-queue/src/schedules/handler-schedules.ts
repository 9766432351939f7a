import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { RegisteredJobHandler } from '../discovery/job-handler.registry';
import { Queryable } from '../sql/queryable';
import { upsertSchedule } from '../sql/upsert-schedule.query';
import { deleteHandlerSchedules } from '../sql/delete-schedules.query';
import { cronTimes } from './cron-expression';

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
 * a handler's cron, the last to boot wins, and every node fires what the table holds.
 */
export async function syncHandlerSchedules(
  db: Queryable,
  schema: string,
  handlers: RegisteredJobHandler[],
  now = new Date(),
): Promise<HandlerScheduleSync> {
  const written: string[] = [];
  for (const { jobType, options } of handlers) {
    if (!options.schedule) continue;
    await upsertSchedule(db, schema, {
      name: jobType,
      ...options.schedule,
      jobType,
      dataJson: 'null',
      priority: DEFAULT_PRIORITY,
      maxAttempts: null,
      source: 'handler',
      nextFireAt: cronTimes(options.schedule).next(now),
    });
    written.push(jobType);
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

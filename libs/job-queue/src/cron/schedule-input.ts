import { DEFAULT_PRIORITY, MAX_SCHEDULE_NAME_LENGTH } from '../job-queue.constants';
import { checkInteger, checkJobType, checkText } from '../validation/job-input.checks';
import { inputValidator } from '../validation/input.validator';
import { Validator } from '../validation/validator';
import { measureData } from '../validation/json-data';
import { ScheduleOptions } from '../interfaces/schedule-options.interface';
import { ScheduleInsertRow } from './sql/upsert-schedule.query';
import { CATCH_UP_VALUES, checkCronSpec, cronTimes, DEFAULT_CATCH_UP } from './cron-expression';

const SCHEDULE_OPTION_KEYS = ['timezone', 'catchUp', 'priority', 'maxAttempts'] as const;

const scheduleInput: Validator = inputValidator('schedule');

/** A schedule's name: like a job type, non-blank text of at most 255 characters. */
export function checkScheduleName(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    scheduleInput.fail(
      field,
      value,
      `a non-blank string of at most ${MAX_SCHEDULE_NAME_LENGTH} characters`,
    );
  }
  return checkText(field, value, MAX_SCHEDULE_NAME_LENGTH);
}

/** A schedule to write, checked, before its first fire time is known (see `withFirstFireAt`). */
export type CheckedSchedule = Omit<ScheduleInsertRow, 'nextFireAt'>;

/**
 * The arguments of `QueueService.schedule()` as a row to write, each checked first (an
 * `InvalidJobInputError` naming the argument and value: `cron`, `timezone`, `catchUp` …; `data`
 * by its path only), before any statement is sent.
 */
export function checkedSchedule(
  name: unknown,
  cron: unknown,
  jobType: unknown,
  data: unknown,
  opts: unknown,
  maxPayloadBytes: number,
): CheckedSchedule {
  const checkedName = checkScheduleName('name', name);
  scheduleInput.knownKeys(scheduleInput.plainObject('options', opts), SCHEDULE_OPTION_KEYS);
  const options = opts as ScheduleOptions;
  const spec = checkCronSpec(cron, options.timezone, scheduleInput.fail);
  const catchUp = options.catchUp ?? DEFAULT_CATCH_UP;
  if (!CATCH_UP_VALUES.includes(catchUp))
    scheduleInput.fail('catchUp', catchUp, "'once' or 'skip'");
  return {
    name: checkedName,
    ...spec,
    catchUp,
    jobType: checkJobType('type', jobType),
    dataJson: measureData('data', data, maxPayloadBytes).json,
    priority:
      options.priority === undefined
        ? DEFAULT_PRIORITY
        : checkInteger('priority', options.priority),
    maxAttempts:
      options.maxAttempts === undefined
        ? null
        : checkInteger('maxAttempts', options.maxAttempts, 1),
    source: 'schedule',
  };
}

/**
 * The row with its first fire time after `now`, the database's clock (read for this write): not
 * this process's, so a node whose clock runs ahead neither skips a fire time nor, running behind,
 * writes one that is due, and missed, at once. Later ones follow from the database's clock too.
 */
export function withFirstFireAt(schedule: CheckedSchedule, now: Date): ScheduleInsertRow {
  return { ...schedule, nextFireAt: cronTimes(schedule).next(now) };
}

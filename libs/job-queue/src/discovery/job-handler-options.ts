import { InvalidJobQueueOptionsError } from '../errors';
import { INVALID_OPTION, UNKNOWN_OPTION } from '../job-queue.messages';
import { intOption, resolveBackoff, ResolvedJobQueueOptions } from '../job-queue.options';
import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';
import { HandlerSchedule, ResolvedHandlerOptions } from './job-handler.registry';
import { CATCH_UP_VALUES, checkCronSpec, DEFAULT_CATCH_UP } from '../schedules/cron-expression';
import { resolveRetention } from '../retention.options';

const HANDLER_OPTION_KEYS = [
  'concurrency',
  'maxAttempts',
  'timeoutMs',
  'backoff',
  'cron',
  'timezone',
  'catchUp',
  'retention',
];

/**
 * Checks `@JobHandler` options at boot and fills in the module's defaults. Errors name the
 * handler (`@JobHandler('email.send') on Mailer#send: concurrency`).
 */
export function resolveHandlerOptions(
  where: string,
  options: JobHandlerOptions,
  moduleOptions: ResolvedJobQueueOptions,
): ResolvedHandlerOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidJobQueueOptionsError(
      INVALID_OPTION(where, options, 'an options object'),
      where,
      options,
    );
  }
  for (const key of Object.keys(options)) {
    if (!HANDLER_OPTION_KEYS.includes(key)) {
      const option = `${where}: ${key}`;
      throw new InvalidJobQueueOptionsError(
        UNKNOWN_OPTION(option, HANDLER_OPTION_KEYS),
        option,
        undefined,
      );
    }
  }
  return {
    concurrency:
      options.concurrency === undefined
        ? undefined
        : intOption(`${where}: concurrency`, options.concurrency, 0, 1),
    maxAttempts: intOption(
      `${where}: maxAttempts`,
      options.maxAttempts,
      moduleOptions.defaultMaxAttempts,
      1,
    ),
    timeoutMs:
      options.timeoutMs === undefined
        ? undefined
        : intOption(`${where}: timeoutMs`, options.timeoutMs, 0, 1),
    backoff: resolveBackoff(`${where}: backoff`, options.backoff, moduleOptions.backoff),
    schedule: resolveHandlerSchedule(where, options),
    retention: resolveRetention(`${where}: retention`, options.retention, moduleOptions.retention),
  };
}

/** `cron`, `timezone`, `catchUp`: checked with the parser the schedule fires by. */
function resolveHandlerSchedule(
  where: string,
  options: JobHandlerOptions,
): HandlerSchedule | undefined {
  const fail = (field: string, value: unknown, expected: string): never => {
    const option = `${where}: ${field}`;
    throw new InvalidJobQueueOptionsError(INVALID_OPTION(option, value, expected), option, value);
  };
  const { cron, timezone, catchUp } = options;
  if (cron === undefined) {
    if (timezone !== undefined) fail('timezone', timezone, 'no timezone without cron');
    if (catchUp !== undefined) fail('catchUp', catchUp, 'no catchUp without cron');
    return undefined;
  }
  const spec = checkCronSpec(cron, timezone, fail);
  const policy = catchUp ?? DEFAULT_CATCH_UP;
  if (!CATCH_UP_VALUES.includes(policy)) fail('catchUp', catchUp, "'once' or 'skip'");
  return { ...spec, catchUp: policy };
}

import { InvalidJobQueueOptionsError } from '../errors';
import { INVALID_OPTION, UNKNOWN_OPTION } from '../job-queue.messages';
import { intOption, resolveBackoff, ResolvedJobQueueOptions } from '../job-queue.options';
import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';
import { resolveRetention } from '../retention.options';
import { ResolvedHandlerOptions } from './job-handler.registry';

const HANDLER_OPTION_KEYS = ['concurrency', 'maxAttempts', 'timeoutMs', 'backoff', 'retention'];

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
    retention: resolveRetention(`${where}: retention`, options.retention, moduleOptions.retention),
  };
}

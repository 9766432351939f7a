import type { Type } from '@nestjs/common';
import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';
import { requireDtoPeers } from '../queue/job-dto';
import { resolveBackoff } from '../options/backoff.option';
import { HANDLER_OPTIONS } from '../options/handler-options.table';
import { ResolvedConcurrencyLimits, ResolvedJobQueueOptions } from '../options/resolved-options';
import { resolveRateLimit } from '../options/rate-limit.option';
import { resolveRetention } from '../options/retention.option';
import {
  CATCH_UP_VALUES,
  checkCronSpec,
  DEFAULT_CATCH_UP,
  HandlerSchedule,
} from '../cron/cron-expression';
import { optionValidator as check } from '../validation/option.validator';
import { characterCount, STORABLE_TEXT, UNSTORABLE_TEXT } from '../validation/storable-text';
import { MAX_JOB_TYPE_LENGTH } from '../job-queue.constants';
import { ResolvedHandlerOptions } from './job-handler.registry';

const HANDLER_OPTION_KEYS = Object.keys(HANDLER_OPTIONS);

/**
 * Checks `@JobHandler` options at boot and fills in the module's defaults. Errors name the
 * handler (`@JobHandler('email.send') on Mailer#send: concurrency`).
 */
export function resolveHandlerOptions(
  where: string,
  options: JobHandlerOptions,
  moduleOptions: ResolvedJobQueueOptions,
  jobType: string,
): ResolvedHandlerOptions {
  if (typeof options !== 'object' || options === null) {
    check.fail(where, options, 'an options object');
  }
  check.knownKeys(options, HANDLER_OPTION_KEYS, { prefix: `${where}: ` });
  const count = (key: 'concurrency' | 'maxAttempts' | 'timeoutMs', value: unknown) =>
    check.integer(`${where}: ${key}`, value, HANDLER_OPTIONS[key].min);
  return {
    concurrency:
      options.concurrency === undefined ? undefined : count('concurrency', options.concurrency),
    maxAttempts:
      options.maxAttempts === undefined
        ? moduleOptions.defaultMaxAttempts
        : count('maxAttempts', options.maxAttempts),
    timeoutMs: options.timeoutMs === undefined ? undefined : count('timeoutMs', options.timeoutMs),
    backoff: resolveBackoff(`${where}: backoff`, options.backoff, moduleOptions.backoff),
    schedule: resolveHandlerSchedule(where, options),
    retention: resolveRetention(`${where}: retention`, options.retention, moduleOptions.retention),
    limits: resolveConcurrencyLimits(where, options),
    transaction:
      options.transaction === undefined
        ? false
        : check.boolean(`${where}: transaction`, options.transaction),
    dto: resolveDto(where, options.dto),
    deadLetter: resolveDeadLetter(`${where}: deadLetter`, options.deadLetter, jobType),
  };
}

/**
 * `deadLetter`: a job type name another handler (or none yet) runs, refused here rather than by
 * the CHECKs of `job_types` when the worker stores it, so the error names the handler. Its own
 * type is refused: every failed copy would make another.
 */
function resolveDeadLetter(field: string, value: unknown, jobType: string): string | null {
  if (value === undefined) return null;
  const expected = `a job type other than '${jobType}': non-blank text of at most ${MAX_JOB_TYPE_LENGTH} characters, ${STORABLE_TEXT}`;
  if (
    typeof value !== 'string' ||
    value.trim().length === 0 ||
    UNSTORABLE_TEXT.test(value) ||
    characterCount(value, MAX_JOB_TYPE_LENGTH) > MAX_JOB_TYPE_LENGTH ||
    value === jobType
  ) {
    check.fail(field, value, expected);
  }
  return value;
}

/** `dto`: a class, and its peers installed (a missing one fails the boot, naming it). */
function resolveDto(where: string, dto: unknown): Type<object> | undefined {
  if (dto === undefined) return undefined;
  if (typeof dto !== 'function')
    check.fail(`${where}: dto`, dto, 'a class (class-validator decorated)');
  requireDtoPeers(`${where}: dto`);
  return dto as Type<object>;
}

/**
 * `concurrencyPerKey`, `globalConcurrency`, `ordered`, `rateLimit`: refused here rather than by
 * the CHECK of `job_types` when the worker stores them, so the error names the handler.
 */
function resolveConcurrencyLimits(
  where: string,
  options: JobHandlerOptions,
): ResolvedConcurrencyLimits {
  const limit = (key: 'concurrencyPerKey' | 'globalConcurrency'): number | null =>
    options[key] === undefined
      ? null
      : check.integer(`${where}: ${key}`, options[key], HANDLER_OPTIONS[key].min);
  const concurrencyPerKey = limit('concurrencyPerKey');
  const ordered =
    options.ordered === undefined ? false : check.boolean(`${where}: ordered`, options.ordered);
  // More than one job of a key at once could not start them in order.
  if (ordered && concurrencyPerKey !== 1) {
    check.fail(
      `${where}: ordered`,
      options.ordered,
      "ordered only with concurrencyPerKey: 1 (a key's jobs start one at a time); " +
        `concurrencyPerKey is ${concurrencyPerKey ?? 'not set'}`,
    );
  }
  return {
    concurrencyPerKey,
    globalConcurrency: limit('globalConcurrency'),
    ordered,
    rateLimit: resolveRateLimit(`${where}: rateLimit`, options.rateLimit),
  };
}

/** `cron`, `timezone`, `catchUp`: checked with the parser the schedule fires by. */
function resolveHandlerSchedule(
  where: string,
  options: JobHandlerOptions,
): HandlerSchedule | undefined {
  const fail = (field: string, value: unknown, expected: string): never =>
    check.fail(`${where}: ${field}`, value, expected);
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

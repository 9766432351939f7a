import { DAY_MS, MAX_RETENTION_MS } from '../job-queue.constants';
import { RetentionOptions } from '../interfaces/retention-options.interface';
import { optionValidator as check } from '../validation/option.validator';
import { ResolvedRetention } from './resolved-options';

/** How long finished jobs are kept by default: completed 1 day, failed and cancelled 7 days. */
export const DEFAULT_RETENTION: ResolvedRetention = {
  completedMs: DAY_MS,
  failedMs: 7 * DAY_MS,
  cancelledMs: 7 * DAY_MS,
};

export const KEEP_FOREVER: ResolvedRetention = {
  completedMs: null,
  failedMs: null,
  cancelledMs: null,
};

const RETENTION_KEYS = ['completedMs', 'failedMs', 'cancelledMs'] as const;

function retentionMs(option: string, value: unknown, fallback: number | null): number | null {
  if (value === false) return null;
  if (value === undefined) return fallback;
  return check.integer(
    option,
    value,
    0,
    MAX_RETENTION_MS,
    `false (keep forever) or an integer from 0 to ${MAX_RETENTION_MS}`,
  );
}

/**
 * Fills in and checks a `retention` option (`false`: keep everything); unset keys take
 * `fallback`'s. Shared by the module's option (over the defaults) and `@JobHandler`'s (over the
 * module's). Errors name the option (`retention.completedMs`) and the value.
 */
export function resolveRetention(
  option: string,
  value: unknown,
  fallback: ResolvedRetention,
): ResolvedRetention {
  if (value === undefined) return fallback;
  if (value === false) return KEEP_FOREVER;
  const given: RetentionOptions = check.plainObject(
    option,
    value,
    'false or an object { completedMs, failedMs, cancelledMs }',
  );
  check.knownKeys(given, RETENTION_KEYS, { prefix: `${option}.` });
  return {
    completedMs: retentionMs(`${option}.completedMs`, given.completedMs, fallback.completedMs),
    failedMs: retentionMs(`${option}.failedMs`, given.failedMs, fallback.failedMs),
    cancelledMs: retentionMs(`${option}.cancelledMs`, given.cancelledMs, fallback.cancelledMs),
  };
}

import {
  DEFAULT_CANCELLED_RETENTION_MS,
  DEFAULT_COMPLETED_RETENTION_MS,
  DEFAULT_FAILED_RETENTION_MS,
  MAX_RETENTION_MS,
} from './job-queue.constants';
import { INVALID_OPTION, UNKNOWN_OPTION } from './job-queue.messages';
import { InvalidJobQueueOptionsError } from './errors';
import { RetentionOptions } from './interfaces/retention-options.interface';

/** Milliseconds each finished status is kept; `null`: kept forever. */
export interface ResolvedRetention {
  completedMs: number | null;
  failedMs: number | null;
  cancelledMs: number | null;
}

export const DEFAULT_RETENTION: ResolvedRetention = {
  completedMs: DEFAULT_COMPLETED_RETENTION_MS,
  failedMs: DEFAULT_FAILED_RETENTION_MS,
  cancelledMs: DEFAULT_CANCELLED_RETENTION_MS,
};

export const KEEP_FOREVER: ResolvedRetention = {
  completedMs: null,
  failedMs: null,
  cancelledMs: null,
};

const RETENTION_KEYS = ['completedMs', 'failedMs', 'cancelledMs'] as const;

function fail(option: string, value: unknown, expected: string): never {
  throw new InvalidJobQueueOptionsError(INVALID_OPTION(option, value, expected), option, value);
}

function retentionMs(option: string, value: unknown, fallback: number | null): number | null {
  if (value === false) return null;
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_RETENTION_MS
  ) {
    fail(option, value, `false (keep forever) or an integer from 0 to ${MAX_RETENTION_MS}`);
  }
  return value;
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(option, value, 'false or an object { completedMs, failedMs, cancelledMs }');
  }
  for (const key of Object.keys(value)) {
    if (!(RETENTION_KEYS as readonly string[]).includes(key)) {
      const name = `${option}.${key}`;
      throw new InvalidJobQueueOptionsError(UNKNOWN_OPTION(name, RETENTION_KEYS), name, undefined);
    }
  }
  const given = value as RetentionOptions;
  return {
    completedMs: retentionMs(`${option}.completedMs`, given.completedMs, fallback.completedMs),
    failedMs: retentionMs(`${option}.failedMs`, given.failedMs, fallback.failedMs),
    cancelledMs: retentionMs(`${option}.cancelledMs`, given.cancelledMs, fallback.cancelledMs),
  };
}

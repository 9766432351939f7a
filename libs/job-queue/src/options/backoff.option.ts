import { BackoffOptions } from '../interfaces/backoff-options.interface';
import { optionValidator as check } from '../validation/option.validator';
import { ResolvedBackoff } from './resolved-options';

/** The module's `backoff` unless it names one: from 1 s, doubling, at most an hour, ±20%. */
export const DEFAULT_BACKOFF: ResolvedBackoff = {
  baseDelayMs: 1_000,
  maxDelayMs: 60 * 60 * 1_000,
  jitter: 0.2,
};

const BACKOFF_KEYS = ['baseDelayMs', 'maxDelayMs', 'jitter'] as const;

/** Fills in defaults and checks a backoff; shared by module options and `@JobHandler` options. */
export function resolveBackoff(
  option: string,
  value: unknown,
  fallback: ResolvedBackoff,
): ResolvedBackoff {
  if (value === undefined) return fallback;
  const given: BackoffOptions = check.plainObject(
    option,
    value,
    'an object { baseDelayMs, maxDelayMs, jitter }',
  );
  check.knownKeys(given, BACKOFF_KEYS, { prefix: `${option}.` });
  const baseDelayMs =
    given.baseDelayMs === undefined
      ? fallback.baseDelayMs
      : check.integer(`${option}.baseDelayMs`, given.baseDelayMs, 0);
  const maxDelayMs =
    given.maxDelayMs === undefined
      ? fallback.maxDelayMs
      : check.integer(`${option}.maxDelayMs`, given.maxDelayMs, 0);
  if (maxDelayMs < baseDelayMs) {
    check.fail(`${option}.maxDelayMs`, maxDelayMs, `at least baseDelayMs (${baseDelayMs})`);
  }
  const jitter = check.number(`${option}.jitter`, given.jitter ?? fallback.jitter, 0, 1);
  return { baseDelayMs, maxDelayMs, jitter };
}

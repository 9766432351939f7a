import { RateLimitOptions } from '../interfaces/rate-limit-options.interface';
import { optionValidator as check } from '../validation/option.validator';
import { ResolvedRateLimit } from './resolved-options';

const RATE_LIMIT_KEYS = ['max', 'perMs', 'byKey'] as const;

/**
 * Checks a handler's `rateLimit` (`option` names it, with the handler). Refused here rather than
 * by the CHECK of `job_types` when the worker stores it, so the error names the field
 * (`rateLimit.max`) and its value; both counts are `integer` columns.
 */
export function resolveRateLimit(option: string, value: unknown): ResolvedRateLimit | null {
  if (value === undefined) return null;
  const given = check.plainObject(option, value, 'an object { max, perMs, byKey? }');
  check.knownKeys(given, RATE_LIMIT_KEYS, { prefix: `${option}.` });
  const { max, perMs, byKey } = given as Partial<RateLimitOptions>;
  return {
    max: check.integer(`${option}.max`, max, 1),
    perMs: check.integer(`${option}.perMs`, perMs, 1),
    byKey: byKey === undefined ? false : check.boolean(`${option}.byKey`, byKey),
  };
}

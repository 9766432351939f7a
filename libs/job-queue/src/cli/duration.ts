import { UsageError } from './cli.errors';

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 };
const DURATION = /^(\d{1,9})(d|h|m|s)$/;
// A date, optionally with a time and zone: what `new Date()` reads the same everywhere.
const ISO_TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const EXPECTED = 'an ISO timestamp (2026-11-30T12:00:00Z) or a duration such as 30d, 12h, 15m, 45s';

/** `30d` → milliseconds; undefined for anything else. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : undefined;
}

/**
 * A point in the past: an ISO timestamp, or a duration ago (`30d`: thirty days before `now`).
 * Throws `UsageError` naming the flag for anything else.
 */
export function pointInPast(flag: string, text: string, now: number): Date {
  const ms = durationMs(text);
  if (ms !== undefined) return new Date(now - ms);
  return timestamp(flag, text);
}

/** A point in the future: an ISO timestamp, or a duration from `now` (`15m`: in 15 minutes). */
export function pointInFuture(flag: string, text: string, now: number): Date {
  const ms = durationMs(text);
  if (ms !== undefined) return new Date(now + ms);
  return timestamp(flag, text);
}

function timestamp(flag: string, text: string): Date {
  const date = ISO_TIMESTAMP.test(text) ? new Date(text) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw new UsageError(`${flag}: "${text}" is not ${EXPECTED}`);
  }
  return date;
}

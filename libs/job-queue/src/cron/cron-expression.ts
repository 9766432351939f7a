import { Cron } from 'croner';
import { MAX_CRON_LENGTH } from '../job-queue.constants';
import { CatchUp } from '../interfaces/schedule-options.interface';

export const CATCH_UP_VALUES: readonly CatchUp[] = ['once', 'skip'];
export const DEFAULT_CATCH_UP: CatchUp = 'once';
/**
 * The zone a schedule without `timezone` fires in. Not the process's own zone: nodes in different
 * zones must compute the same fire times.
 */
export const DEFAULT_TIMEZONE = 'UTC';

/** A checked cron expression and the IANA zone it fires in (its canonical name). */
export interface CronSpec {
  cron: string;
  timezone: string;
}

/** A handler's `cron`, `timezone` and `catchUp`, checked. */
export interface HandlerSchedule extends CronSpec {
  catchUp: CatchUp;
}

/** How a caller reports a bad value: a typed error naming `field` (`cron` or `timezone`). */
export type CronFail = (field: 'cron' | 'timezone', value: unknown, expected: string) => never;

// 5 fields (minute resolution) or 6 (seconds first); croner's 7th field (years) is refused, so an
// expression can never run out of fire times but by naming a day that does not exist.
const CRON_MODE = '5-or-6-parts';

const EXPECTED_CRON =
  'a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds ' +
  'first), or a nickname such as @daily';

/**
 * The zone's canonical IANA name (`europe/berlin` → `Europe/Berlin`), or `undefined` for a zone
 * this runtime does not know.
 */
function canonicalZone(timezone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * Checks a cron expression and time zone with croner, the parser the schedules fire by: a bad
 * expression, an unknown zone, or an expression that never fires (`0 0 30 2 *`) is refused
 * through `fail`, naming the value.
 */
export function checkCronSpec(cron: unknown, timezone: unknown, fail: CronFail): CronSpec {
  if (typeof cron !== 'string' || cron.trim().length === 0 || cron.length > MAX_CRON_LENGTH) {
    fail('cron', cron, `${EXPECTED_CRON}, at most ${MAX_CRON_LENGTH} characters`);
  }
  let zone = DEFAULT_TIMEZONE;
  if (timezone !== undefined) {
    const canonical = typeof timezone === 'string' ? canonicalZone(timezone) : undefined;
    if (canonical === undefined) {
      fail('timezone', timezone, 'an IANA time zone name such as "Europe/Berlin" or "UTC"');
    }
    zone = canonical;
  }
  let times: CronTimes;
  try {
    times = cronTimes({ cron, timezone: zone });
  } catch (error) {
    fail('cron', cron, `${EXPECTED_CRON} (croner: ${(error as Error).message})`);
  }
  if (times.next(new Date()) === null) {
    fail('cron', cron, 'a cron expression that fires (this one names no date that exists)');
  }
  return { cron, timezone: zone };
}

/** The fire times of a schedule, in whole seconds, as croner computes them in its zone. */
export interface CronTimes {
  /** The first fire time strictly after `after`, or `null` when there is none. */
  next(after: Date): Date | null;
  /** The last fire time at or before `at`, or `null` when there is none. */
  latestAtOrBefore(at: Date): Date | null;
}

/**
 * The fire times of a checked spec. Croner applies the zone's rules, daylight saving included: a
 * fixed time of day inside a spring-forward gap fires once, at the first valid time after it, and
 * one that occurs twice at fall-back fires once; expressions with wildcards or steps in seconds,
 * minutes or hours skip the gap and fire on both occurrences. Throws for an expression croner
 * refuses (a row edited by hand).
 */
export function cronTimes({ cron, timezone }: CronSpec): CronTimes {
  const pattern = new Cron(cron, { paused: true, timezone, mode: CRON_MODE });
  return {
    next: (after) => pattern.nextRun(after),
    // previousRuns looks strictly before its reference: a millisecond later includes `at`.
    latestAtOrBefore: (at) => pattern.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null,
  };
}

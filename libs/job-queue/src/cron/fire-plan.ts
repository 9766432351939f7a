import { CatchUp } from '../interfaces/schedule-options.interface';
import { CronTimes } from './cron-expression';

/**
 * How late a fire time may be enqueued and still count as on time when no worker ticked after
 * it came (the fleet was down, or just came back): its schedule's period (the gap to the fire
 * time after it), but at least `MIN_LATENESS_MS` and at most `MAX_LATENESS_MS`. Past that it was
 * missed, and `catchUp` decides.
 */
export const MIN_LATENESS_MS = 2_000;
export const MAX_LATENESS_MS = 60_000;

/**
 * How far behind the ticks may fall and still enqueue each fire time: one that came while the
 * workers were ticking (see `tickingSince`) gets a job of its own however late the tick that
 * finds it is, up to this. It bounds what one schedule can enqueue at once (3,600 jobs for an
 * every-second one) when no worker could fire it for a long while, though workers ticked.
 */
export const MAX_BEHIND_MS = 3_600_000;

/** What one tick does for one due schedule. */
export interface FirePlan {
  /** The fire times to enqueue a job for, oldest first: one job each. */
  fireTimes: Date[];
  /** The first fire time after `now`, or `null` when the expression fires no more. */
  nextFireAt: Date | null;
  /** The earliest fire time missed (no job of its own), when any was: for the log. */
  missedSince: Date | null;
  /**
   * Why they were missed: `false` no worker ticked after `missedSince` came (every worker down or
   * stalled); `true` workers ticked, but none fired it for more than `MAX_BEHIND_MS`.
   */
  missedWhileTicking: boolean;
  /**
   * The fire times among `fireTimes` that are later than their lateness: each still gets its own
   * job because workers ticked after it came (the ticks fell behind); for the log.
   */
  late: Date[];
}

/**
 * The jobs a due schedule gets at `now`, given the earliest fire time not enqueued yet
 * (`nextFireAt`, at or before `now`) and when the workers' current unbroken run of ticks began
 * (`tickingSince`, at or before `now`; see `startCronTick`):
 * - every due fire time that came while workers were ticking (at or after `tickingSince`, at most
 *   `MAX_BEHIND_MS` ago) gets a job of its own: ticks that were slow, or many schedules due at
 *   once, lose nothing;
 * - so does one that came before, if it is on time (see `MIN_LATENESS_MS`): the fleet just came
 *   back and it is fresh;
 * - the others were missed: they get one job together, for the newest of them
 *   (`catchUp: 'once'`), or none (`'skip'`); when an on-time one is due as well, its job is the
 *   catch-up and the missed ones get none.
 * Only fire times that can be on time are walked (the last `MAX_LATENESS_MS`, or since
 * `tickingSince`, at most `MAX_BEHIND_MS`), so a long outage costs one look-up, not one per
 * fire time missed.
 */
export function planFires(
  times: CronTimes,
  nextFireAt: Date,
  catchUp: CatchUp,
  now: Date,
  tickingSince: Date = now,
): FirePlan {
  const nowMs = now.getTime();
  if (nextFireAt.getTime() > nowMs) {
    return { fireTimes: [], nextFireAt, missedSince: null, missedWhileTicking: false, late: [] };
  }
  const seenFromMs = Math.max(tickingSince.getTime(), nowMs - MAX_BEHIND_MS);
  const horizonMs = Math.min(seenFromMs, nowMs - MAX_LATENESS_MS);
  let fireAt: Date | null =
    nextFireAt.getTime() >= horizonMs ? nextFireAt : times.next(new Date(horizonMs - 1));
  const onTime: Date[] = [];
  const late: Date[] = [];
  while (fireAt !== null && fireAt.getTime() <= nowMs) {
    const following = times.next(fireAt);
    const period = following === null ? Infinity : following.getTime() - fireAt.getTime();
    const lateness = Math.min(MAX_LATENESS_MS, Math.max(MIN_LATENESS_MS, period));
    const fresh = nowMs - fireAt.getTime() <= lateness;
    if (fresh || fireAt.getTime() >= seenFromMs) onTime.push(fireAt);
    if (!fresh && fireAt.getTime() >= seenFromMs) late.push(fireAt);
    fireAt = following;
  }
  // The due fire times start at nextFireAt: any before the first on-time one were missed.
  const missed = onTime.length === 0 || onTime[0].getTime() > nextFireAt.getTime();
  let fireTimes = onTime;
  if (onTime.length === 0 && catchUp === 'once') {
    const latest = times.latestAtOrBefore(now);
    // The stored time is a fire time too (of this expression, unless edited by hand).
    fireTimes = [latest !== null && latest >= nextFireAt ? latest : nextFireAt];
  }
  return {
    fireTimes,
    nextFireAt: times.next(now),
    missedSince: missed ? nextFireAt : null,
    missedWhileTicking: missed && nextFireAt.getTime() >= tickingSince.getTime(),
    late,
  };
}

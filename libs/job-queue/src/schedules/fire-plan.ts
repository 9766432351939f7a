import { CatchUp, CronTimes } from './cron-expression';

/**
 * How late a fire time may be enqueued and still count as on time: its schedule's period (the
 * gap to the fire time after it), but at least `MIN_LATENESS_MS` (a few ticks: every node's tick
 * can be late under load) and at most `MAX_LATENESS_MS`. Past that, no node was running when it
 * came: it was missed, and `catchUp` decides.
 */
export const MIN_LATENESS_MS = 2_000;
export const MAX_LATENESS_MS = 60_000;

/** What one tick does for one due schedule. */
export interface FirePlan {
  /** The fire times to enqueue a job for, oldest first: one job each. */
  fireTimes: Date[];
  /** The first fire time after `now`, or `null` when the expression fires no more. */
  nextFireAt: Date | null;
  /** The earliest fire time missed (no job of its own), when any was: for the log. */
  missedSince: Date | null;
}

/**
 * The jobs a due schedule gets at `now`, given the earliest fire time not enqueued yet
 * (`nextFireAt`, at or before `now`):
 * - every due fire time that is on time (see `MIN_LATENESS_MS`) gets a job of its own: ticks that
 *   were merely late lose nothing;
 * - fire times missed while no node ran get one job together, for the newest of them
 *   (`catchUp: 'once'`), or none (`'skip'`); when an on-time one is due as well, its job is the
 *   catch-up and the missed ones get none.
 * Only the last `MAX_LATENESS_MS` are walked, so a long outage costs one look-up, not one per
 * fire time missed.
 */
export function planFires(
  times: CronTimes,
  nextFireAt: Date,
  catchUp: CatchUp,
  now: Date,
): FirePlan {
  const nowMs = now.getTime();
  if (nextFireAt.getTime() > nowMs) return { fireTimes: [], nextFireAt, missedSince: null };
  const onTime: Date[] = [];
  const horizon = new Date(nowMs - MAX_LATENESS_MS);
  let fireAt: Date | null = nextFireAt >= horizon ? nextFireAt : times.next(horizon);
  while (fireAt !== null && fireAt.getTime() <= nowMs) {
    const following = times.next(fireAt);
    const period = following === null ? Infinity : following.getTime() - fireAt.getTime();
    const lateness = Math.min(MAX_LATENESS_MS, Math.max(MIN_LATENESS_MS, period));
    if (nowMs - fireAt.getTime() <= lateness) onTime.push(fireAt);
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
  return { fireTimes, nextFireAt: times.next(now), missedSince: missed ? nextFireAt : null };
}

import { MAX_PREFETCH } from '../job-queue.constants';
import { RunTimes } from './run-times';

/** How much of the last claim round trips the estimate keeps at each new one. */
const ROUND_TRIP_SMOOTHING = 0.8;
/**
 * `'auto'` holds what the slots finish in this many claim round trips, and at most this many
 * jobs per slot.
 */
const AUTO_ROUND_TRIPS = 4;
/**
 * `'auto'` may hold this many jobs whatever the concurrency: a few slots of short jobs finish
 * hundreds in a round trip, and a claim of as many costs little more than one of ten. Held this
 * long, no-op jobs wait some ms (graphile-worker's local queue holds 500 too).
 */
export const AUTO_MIN_CAP = 500;

/**
 * How many jobs a claim may take ahead of the free slots (`worker.prefetch`): the number given,
 * or for `'auto'` the jobs the slots finish in `AUTO_ROUND_TRIPS` claim round trips,
 * concurrency × round trips × claim round trip / median run time (both as this worker measured
 * them), at most `AUTO_ROUND_TRIPS` × `concurrency` or `AUTO_MIN_CAP`, the more. Nothing before a run has been timed, and
 * nothing once a run takes longer than that many claims: a held job would wait longer than it
 * saves.
 */
export class PrefetchSize {
  private roundTripMs: number | undefined;
  private current: number;

  constructor(
    private readonly setting: number | 'auto',
    private readonly concurrency: number,
    private readonly runTimes: RunTimes,
  ) {
    this.current = setting === 'auto' ? 0 : setting;
  }

  /** The size until the next claim comes back: read for every freed slot, so kept, not computed. */
  get jobs(): number {
    return this.current;
  }

  /** A claim came back after `ms` (sent to answered): the size is made again. */
  claimTook(ms: number): void {
    if (this.setting !== 'auto') return;
    this.roundTripMs =
      this.roundTripMs === undefined
        ? ms
        : ROUND_TRIP_SMOOTHING * this.roundTripMs + (1 - ROUND_TRIP_SMOOTHING) * ms;
    const runMs = this.runTimes.medianOfAll();
    if (runMs === undefined) return;
    const slotsWorth = AUTO_ROUND_TRIPS * this.concurrency;
    // A run under a microsecond is a no-op: hold the most.
    const finished = Math.floor((slotsWorth * this.roundTripMs) / Math.max(runMs, 0.001));
    this.current = Math.min(finished, Math.max(slotsWorth, AUTO_MIN_CAP), MAX_PREFETCH);
  }
}

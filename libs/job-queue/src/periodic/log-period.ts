/** First gap between two lines about the same ongoing failure. */
export const FIRST_LOG_PERIOD_MS = 1_000;
/** Longest gap: a long outage still says it is going on twice a minute. */
export const MAX_LOG_PERIOD_MS = 30_000;

/**
 * One log line per period while a failure lasts, the period doubling from `firstMs` up to
 * `maxMs`: an outage of any length gives a handful of lines per loop, not one per retry.
 */
export class LogPeriod {
  private nextAt = 0;
  private periodMs: number;

  constructor(
    private readonly firstMs = FIRST_LOG_PERIOD_MS,
    private readonly maxMs = MAX_LOG_PERIOD_MS,
  ) {
    this.periodMs = firstMs;
  }

  /** True when a line is due now; the next one is then due a (doubled) period later. */
  due(now = Date.now()): boolean {
    if (now < this.nextAt) return false;
    this.nextAt = now + this.periodMs;
    this.periodMs = Math.min(this.maxMs, this.periodMs * 2);
    return true;
  }

  /** The failure is over: the next one logs at once. */
  reset(): void {
    this.nextAt = 0;
    this.periodMs = this.firstMs;
  }
}

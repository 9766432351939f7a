/** Longest pause between retries of a failing database call. */
export const MAX_FAILURE_BACKOFF_MS = 30_000;

/**
 * Exponential, capped back-off for a loop whose database calls fail (an outage): the caller
 * waits `delayMs` before trying again, and `failed()` says when to log, once per back-off
 * period, so an outage gives one line per period instead of one per attempt.
 */
export class FailureBackoff {
  private failures = 0;
  private loggedUntil = 0;

  constructor(
    private readonly baseMs = 100,
    private readonly maxMs = MAX_FAILURE_BACKOFF_MS,
  ) {}

  get failing(): boolean {
    return this.failures > 0;
  }

  get delayMs(): number {
    return this.failures === 0 ? 0 : Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
  }

  /** Records a failure; true when this failure should be logged. */
  failed(): boolean {
    this.failures++;
    const now = Date.now();
    if (now < this.loggedUntil) return false;
    this.loggedUntil = now + this.delayMs;
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.loggedUntil = 0;
  }
}

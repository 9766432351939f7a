/**
 * Longest pause between retries of a failing database call. Short on purpose: a worker must be
 * back at work within about a second of the database returning, however long the outage was.
 * What keeps an outage from flooding the log is `LogPeriod`, not a longer pause.
 */
export const MAX_FAILURE_BACKOFF_MS = 1_000;

/**
 * When to retry a loop whose database calls fail (an outage): exponential from `baseMs`, capped
 * at `maxMs`. It only counts failures and says how long to wait; when to log is `LogPeriod`'s job.
 */
export class FailureBackoff {
  private count = 0;

  constructor(
    private readonly baseMs = 100,
    private readonly maxMs = MAX_FAILURE_BACKOFF_MS,
  ) {}

  get failing(): boolean {
    return this.count > 0;
  }

  /** Failures in a row since the last success. */
  get failures(): number {
    return this.count;
  }

  get delayMs(): number {
    return this.count === 0 ? 0 : Math.min(this.maxMs, this.baseMs * 2 ** (this.count - 1));
  }

  failed(): void {
    this.count++;
  }

  succeeded(): void {
    this.count = 0;
  }
}

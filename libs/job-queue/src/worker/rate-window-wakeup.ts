import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { databaseErrorText } from '../errors/database-error.util';
import { nextRateOpening } from '../sql/next-rate-opening.query';

/**
 * Wakes the poller when a full rate window of its types opens, so a rate-limited job starts as
 * soon as its window allows instead of at the next poll. Asked after a claim that took fewer
 * rate-limited jobs than it had room for; one timer at a time, the sooner opening winning. An
 * opening further off than the poll interval is left to the interval.
 */
export class RateWindowWakeup {
  private readonly logger = new Logger('JobQueue');
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;

  constructor(
    private readonly dataSource: DataSource,
    private readonly schema: string,
    private readonly pollIntervalMs: number,
    private readonly wake: () => void,
  ) {}

  async afterClaim(rateLimitedTypes: readonly string[]): Promise<void> {
    let waitMs: number | null;
    try {
      waitMs = await nextRateOpening(this.dataSource, this.schema, rateLimitedTypes);
    } catch (error) {
      this.logger.warn(
        `Could not read when the rate windows open (${databaseErrorText(error)}); ` +
          'their jobs start at the next poll',
      );
      return;
    }
    if (waitMs === null || waitMs >= this.pollIntervalMs) return;
    // A window that has just opened is the next claim's: at least a millisecond on, so a
    // clock read a moment early cannot make a claim loop that finds it still closed.
    const delay = Math.max(1, Math.ceil(waitMs) + 1);
    const dueAt = Date.now() + delay;
    if (this.timer && dueAt >= this.dueAt) return;
    this.cancel();
    this.dueAt = dueAt;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = Infinity;
      this.wake();
    }, delay).unref();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = Infinity;
  }
}

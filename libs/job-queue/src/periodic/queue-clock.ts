import { Injectable } from '@nestjs/common';

/**
 * The queue's time, for the statements that take one (`queueNowSql`): the database's now() in
 * production (an offset of 0, `now()` null), moved forward only by the testing kit
 * (`JobQueueTester.advanceTime`). Moved, it is this process's clock plus the offset, and every
 * statement that reads or writes the queue's time (enqueue, claim, stager, outcomes, reaper,
 * pruner, uniqueness windows, cron) is given it.
 */
@Injectable()
export class QueueClock {
  private offset = 0;

  /** The time to pass statements: null (the database's now()) unless the clock was moved. */
  now(): Date | null {
    return this.offset === 0 ? null : new Date(Date.now() + this.offset);
  }

  /** Moves the clock `ms` forward (the kit checks `ms`). */
  advance(ms: number): void {
    this.offset += ms;
  }
}

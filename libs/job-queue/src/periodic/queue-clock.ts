import { Injectable } from '@nestjs/common';

/**
 * The queue's time, for the statements that take one: the database's now() in production (an
 * offset of 0, `now()` null), moved forward only by the testing kit (`JobQueueTester.advanceTime`).
 * Moved, it is this process's clock plus the offset; what is scheduled relative to now (a retry's
 * or snooze's delay, an enqueue's `delayMs`) is pushed by the offset too, so that it falls due
 * at the kit's time plus its delay.
 */
@Injectable()
export class QueueClock {
  private offset = 0;

  /** How far ahead of real time the queue's clock is, in ms (0 outside tests). */
  get offsetMs(): number {
    return this.offset;
  }

  /** The time to pass statements: null (the database's now()) unless the clock was moved. */
  now(): Date | null {
    return this.offset === 0 ? null : new Date(Date.now() + this.offset);
  }

  /** Moves the clock `ms` forward (the kit checks `ms`). */
  advance(ms: number): void {
    this.offset += ms;
  }

  /** A delay from now as the statements take it: pushed by the offset once the clock moved. */
  delayFromNow(delayMs: number): number {
    return this.offset === 0 ? delayMs : delayMs + this.offset;
  }
}

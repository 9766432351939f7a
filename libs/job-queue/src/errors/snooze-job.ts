import { PG_INT_MAX } from '../job-queue.constants';
import { INVALID_INPUT } from '../job-queue.messages';
import { InvalidJobInputError } from './invalid-job-input.error';
import { JobQueueError } from './job-queue.error';

/**
 * Throw from a handler (or return `ctx.snooze(delayMs)`, which makes one) to run the job again
 * later without spending an attempt: its `attempts` go back to what they were before this run
 * claimed it, and it waits `delayMs` (`scheduled`, or `pending` when `delayMs` is 0) like a
 * retry's backoff. Nothing else about the job changes: no `last_error`, no result. Only the
 * current run can snooze its job, like any outcome: a run whose job was cancelled, retried or
 * taken back meanwhile writes nothing.
 *
 * `delayMs` is checked like `enqueue()`'s: an integer from 0 to 2147483647 (about 24.8 days).
 * Anything else throws `InvalidJobInputError` (field `snoozeMs`) from this constructor, so a
 * handler that snoozes by a bad delay fails its attempt with that error as `last_error`.
 *
 * @publicApi
 */
export class SnoozeJob extends JobQueueError {
  /** How long the job waits before it can be claimed again, in ms (checked). */
  readonly delayMs: number;

  constructor(delayMs: number) {
    super(`Job snoozed for ${checkSnoozeMs(delayMs)} ms`);
    this.delayMs = delayMs;
  }
}

/** The snooze delay as given, or `InvalidJobInputError` naming `snoozeMs`. */
function checkSnoozeMs(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > PG_INT_MAX) {
    throw new InvalidJobInputError(
      INVALID_INPUT('snoozeMs', value, `an integer from 0 to ${PG_INT_MAX}`),
      'snoozeMs',
      value,
    );
  }
  return value;
}

import { JobQueueError } from './job-queue.error';

/**
 * A module or handler option is unknown or out of range. Thrown at boot, so a bad
 * configuration never reaches a running worker.
 *
 * @publicApi
 */
export class InvalidJobQueueOptionsError extends JobQueueError {
  constructor(
    message: string,
    /** Dotted path of the option, e.g. `worker.concurrency`. */
    readonly option: string,
    readonly value: unknown,
  ) {
    super(message);
  }
}

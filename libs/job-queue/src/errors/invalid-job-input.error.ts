import { JobQueueError } from './job-queue.error';

/**
 * An argument to `QueueService` is invalid: nothing was written.
 * `field` names the argument (`priority`, `data`, `jobs[3].runAt` …) and `value` holds what was given.
 *
 * @publicApi
 */
export class InvalidJobInputError extends JobQueueError {
  constructor(
    message: string,
    readonly field: string,
    readonly value: unknown,
  ) {
    super(message);
  }
}

import { JobQueueError } from './job-queue.error';

/**
 * An argument to `QueueService` is invalid: nothing was written, no statement was sent.
 * `field` names the argument (`priority`, `data.items[3].name`, `jobs[3].runAt` …) and `value`
 * holds what was given, except within `data`: there the message and `value` say what kind of
 * thing was found (`<a function>`, `<a string with NUL or an unpaired surrogate>`, `<N bytes>`),
 * never the payload itself, which may be personal data and would reach logs.
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

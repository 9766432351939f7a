/**
 * The base of every error this library throws on purpose, so callers can tell
 * "the queue rejected this" (`instanceof JobQueueError`) from database or network failures.
 *
 * @publicApi
 */
export class JobQueueError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

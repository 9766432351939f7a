import { JobQueueError } from './job-queue.error';

/**
 * Throw from a handler when retrying cannot help (bad data, a resource that is gone): the job
 * fails at once, whatever attempts remain.
 *
 * @publicApi
 */
export class PermanentJobError extends JobQueueError {}

/** `ctx.signal.reason` when the handler ran past its `timeoutMs`. @publicApi */
export class JobTimeoutError extends JobQueueError {
  constructor(readonly timeoutMs: number) {
    super(`Job handler timed out after ${timeoutMs} ms`);
  }
}

/** `ctx.signal.reason` when the job was cancelled while running. @publicApi */
export class JobCancelledError extends JobQueueError {
  constructor(readonly jobId: string) {
    super(`Job ${jobId} was cancelled or taken over while it ran`);
  }
}

/**
 * `ctx.signal.reason` when the worker shuts down and the handler outlived `shutdownTimeoutMs`.
 * The job goes back to `pending` without losing an attempt.
 *
 * @publicApi
 */
export class WorkerShutdownError extends JobQueueError {
  constructor() {
    super('Worker is shutting down; the job will run again elsewhere');
  }
}

import { JobQueueError } from './job-queue.error';

/** Two methods handle the same job type: the boot fails naming both. @publicApi */
export class DuplicateJobHandlerError extends JobQueueError {
  constructor(
    readonly jobType: string,
    readonly first: string,
    readonly second: string,
  ) {
    super(
      `Job type "${jobType}" has two handlers: ${first} and ${second}. ` +
        `Keep one @JobHandler("${jobType}"), or give the other a different type.`,
    );
  }
}

import { JOB_NOT_FOUND } from '../job-queue.messages';
import { JobQueueError } from './job-queue.error';

/** @publicApi */
export class JobNotFoundError extends JobQueueError {
  constructor(readonly jobId: unknown) {
    super(JOB_NOT_FOUND(jobId));
  }
}

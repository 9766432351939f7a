import { JOB_NOT_IN_STATE } from '../job-queue.messages';
import { JobStatus } from '../entities/job-status.enum';
import { JobQueueError } from './job-queue.error';

/**
 * The job exists but its state does not allow the action (cancelling a completed job,
 * retrying a pending one).
 *
 * @publicApi
 */
export class JobStateConflictError extends JobQueueError {
  constructor(
    readonly jobId: string,
    readonly status: JobStatus,
    action: string,
  ) {
    super(JOB_NOT_IN_STATE(jobId, status, action));
  }
}

import { JOB_KEY_HELD, JOB_NOT_IN_STATE } from '../job-queue.messages';
import { JobStatus } from '../entities/job-status.enum';
import { JobQueueError } from './job-queue.error';

/** Another job that holds the unique key an action would need (see `JobStateConflictError`). */
export interface UniqueKeyHolder {
  /** The key as the caller gave it (without a window's suffix). */
  uniqueKey: string;
  /** The job that holds it, and its status. */
  jobId: string;
  status: JobStatus;
}

/**
 * The job exists but its state does not allow the action (cancelling a completed job,
 * retrying a pending one), or another job holds the unique key the action needs (`keyHolder`:
 * retrying a failed job whose key a newer job took).
 *
 * @publicApi
 */
export class JobStateConflictError extends JobQueueError {
  constructor(
    readonly jobId: string,
    readonly status: JobStatus,
    action: string,
    readonly keyHolder?: UniqueKeyHolder,
  ) {
    super(
      keyHolder
        ? JOB_KEY_HELD(jobId, action, keyHolder.uniqueKey, keyHolder.jobId, keyHolder.status)
        : JOB_NOT_IN_STATE(jobId, status, action),
    );
  }
}

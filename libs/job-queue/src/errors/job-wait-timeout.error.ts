import { JOB_WAIT_TIMED_OUT } from '../job-queue.messages';
import { JobQueueError } from './job-queue.error';

/**
 * `QueueService.waitForJob` gave up: the job had not finished within `timeoutMs`. The job itself
 * is left as it is (still waiting or running); wait again, or `cancel` it.
 *
 * @publicApi
 */
export class JobWaitTimeoutError extends JobQueueError {
  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
  ) {
    super(JOB_WAIT_TIMED_OUT(jobId, timeoutMs));
  }
}

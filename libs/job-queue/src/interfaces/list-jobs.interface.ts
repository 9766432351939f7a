import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';

/**
 * What `QueueService.listJobs()` lists: filters (all optional, combined with AND) and the page.
 *
 * @publicApi
 */
export interface ListJobsQuery {
  /** Only the job with this id: a page of one job, or none. */
  id?: string | number;
  /** Only jobs of this type. */
  type?: string;
  /** Only jobs in this status. */
  status?: JobStatus;
  /**
   * Only unfinished jobs (scheduled, pending, waiting, claimed, running) whose `uniqueKey`
   * starts with this text, taken literally (`%`, `_` and `\` are no wildcards). A finished job's
   * key is never matched, whatever `uniqueStates` it was enqueued with.
   */
  uniqueKeyPrefix?: string;
  /** Jobs per page, 1 to 500. Default: 50. */
  limit?: number;
  /** The `nextCursor` of the previous page; without it, the first (newest) page. */
  cursor?: string;
}

/**
 * A page of `QueueService.listJobs()`.
 *
 * @publicApi
 */
export interface JobListPage {
  /**
   * The jobs, newest first (by id), without their `data` and `meta`: both are left undefined,
   * since payloads may be large (read one job whole with `getJob`).
   */
  jobs: Job[];
  /** The `cursor` of the next page; `null` on the last one. */
  nextCursor: string | null;
}

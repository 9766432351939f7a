/**
 * Where a job is in its life: `pending → claimed → running → completed`, with `failed` and
 * `cancelled` as the other two finished states. The values are stored as-is in `jobs.status`
 * and listed again in the table's CHECK constraint.
 *
 * @publicApi
 */
export enum JobStatus {
  Pending = 'pending',
  Claimed = 'claimed',
  Running = 'running',
  Completed = 'completed',
  Failed = 'failed',
  Cancelled = 'cancelled',
}

/** States a job can still leave; `uniqueKey` is unique among jobs in these states. */
export const UNFINISHED_JOB_STATUSES: readonly JobStatus[] = [
  JobStatus.Pending,
  JobStatus.Claimed,
  JobStatus.Running,
];

/** States a job never leaves (except through `QueueService.retry`). */
export const FINISHED_JOB_STATUSES: readonly JobStatus[] = [
  JobStatus.Completed,
  JobStatus.Failed,
  JobStatus.Cancelled,
];

/**
 * Where a job is in its life: `scheduled → pending → claimed → running → completed`, with
 * `failed` and `cancelled` as the other two finished states. A job whose `run_at` is later than
 * its insert (a delay, the backoff of a retry or of a rescued run) waits as `scheduled`, out of
 * the claim's way, until the stager moves it to `pending` once due; a job due at once starts at
 * `pending`. A job whose concurrency key is at its limit (`concurrencyPerKey`) may be set aside
 * as `waiting` by a claim, out of the claim's way too, and goes back to `pending` when one of its
 * key's slots frees up. A job with unfinished dependencies (`dependsOn`, a flow's steps) is
 * `blocked`, out of every claim's way, until its last dependency finishes (see `Job.flowId`). The values are stored as-is in `jobs.status` and listed again in the table's CHECK
 * constraint.
 *
 * @publicApi
 */
export enum JobStatus {
  Scheduled = 'scheduled',
  Pending = 'pending',
  Waiting = 'waiting',
  Blocked = 'blocked',
  Claimed = 'claimed',
  Running = 'running',
  Completed = 'completed',
  Failed = 'failed',
  Cancelled = 'cancelled',
}

/** The statuses a job ends in: it runs no more unless retried. @internal */
export const FINISHED_JOB_STATUSES: readonly JobStatus[] = [
  JobStatus.Completed,
  JobStatus.Failed,
  JobStatus.Cancelled,
];

/** Whether `status` is one a job ends in (`FINISHED_JOB_STATUSES`). @internal */
export function isFinishedStatus(status: string): boolean {
  return (FINISHED_JOB_STATUSES as readonly string[]).includes(status);
}

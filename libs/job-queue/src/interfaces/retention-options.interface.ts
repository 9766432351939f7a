/**
 * How long finished jobs are kept, by status, counted from when they finished (`completed_at`),
 * in milliseconds; `false` keeps jobs of that status forever. A worker's pruner deletes older
 * ones. `0` deletes them at the next pass.
 *
 * @publicApi
 */
export interface RetentionOptions {
  /** Completed jobs. Default: 86400000 (1 day). */
  completedMs?: number | false;
  /**
   * Jobs that failed for good (out of attempts, or `PermanentJobError`). Default: 604800000
   * (7 days).
   */
  failedMs?: number | false;
  /** Cancelled jobs. Default: 604800000 (7 days). */
  cancelledMs?: number | false;
}

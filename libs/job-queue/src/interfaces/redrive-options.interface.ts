/**
 * Which failed jobs `QueueService.redrive()` puts back to `pending`: every failed job that
 * matches all the filters given (none: every failed job).
 *
 * @publicApi
 */
export interface RedriveOptions {
  /** Only jobs of this type. Default: every type. */
  type?: string;
  /** Only jobs that failed at or after this time (their `completedAt`). Default: any time. */
  since?: Date;
  /** Only these jobs (1 to 1,000 ids); an id of a job that is not failed is left alone. */
  ids?: Array<string | number>;
  /**
   * Resolve with a `RedriveReport` (what was moved, and what was left failed and why) instead
   * of the number moved. Default: false.
   */
  report?: boolean;
}

/**
 * What `QueueService.redrive({ report: true })` did.
 *
 * @publicApi
 */
export interface RedriveReport {
  /** Failed jobs moved back to `pending`. */
  moved: number;
  /**
   * Failed jobs it found and left failed, by reason. `uniqueKey`: another job holds the job's
   * unique key (or an earlier failed job of the same key was moved: only one may hold it).
   * `locked`: another transaction held the job at that moment (a concurrent redrive or retry,
   * which then decides what becomes of it).
   */
  skipped: { uniqueKey: number; locked: number };
}

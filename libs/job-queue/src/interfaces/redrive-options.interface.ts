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
}

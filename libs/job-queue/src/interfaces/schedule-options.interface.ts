/** What happens to fire times missed while no node was running. @publicApi */
export type CatchUp = 'once' | 'skip';

/**
 * Options of `QueueService.schedule(name, cron, type, data, opts)`.
 *
 * @publicApi
 */
export interface ScheduleOptions {
  /** The IANA time zone the expression is read in (`'Europe/Berlin'`). Default: `'UTC'`. */
  timezone?: string;
  /**
   * Fire times missed while no worker ran: `'once'` enqueues one job for them on return (for the
   * newest), `'skip'` none. Default: `'once'`.
   */
  catchUp?: CatchUp;
  /** Priority of each job it enqueues (higher runs first). Default: 100. */
  priority?: number;
  /** Attempts of each job it enqueues. Default: the handler's, else the module's. */
  maxAttempts?: number;
}

/**
 * A recurring job as `schedules()` returns it: every fire time of `cron` (in `timezone`)
 * enqueues one job of `jobType` with `data`, whose `runAt` is that fire time.
 *
 * @publicApi
 */
export interface JobSchedule<T = unknown> {
  /** Unique; a handler's schedule is named after its job type. */
  name: string;
  /** The cron expression, as given. */
  cron: string;
  /** Canonical IANA name; `'UTC'` unless one was given. */
  timezone: string;
  /** What fire times missed while no worker ran get: one job on return, or none. */
  catchUp: CatchUp;
  /** The type of each job it enqueues. */
  jobType: string;
  /** The data of each job it enqueues (`null` for a handler's schedule). */
  data: T;
  /** The priority of each job it enqueues. */
  priority: number;
  /** `null`: the handler's or module's default. */
  maxAttempts: number | null;
  /**
   * `'handler'`: made by a `@JobHandler` with `cron` (named after its job type, kept in step with
   * the decorator at each worker's boot); `'schedule'`: made by `QueueService.schedule()`.
   */
  source: 'handler' | 'schedule';
  /** The next fire time not enqueued yet; `null` when the expression fires no more. */
  nextFireAt: Date | null;
  /** The newest fire time a job was enqueued for; `null` before the first. */
  lastFireAt: Date | null;
  /** When the schedule was first written. */
  createdAt: Date;
  /** When it was last written or fired. */
  updatedAt: Date;
}

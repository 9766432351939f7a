/**
 * Module option `events`: how `@OnJobEvent` listeners and `waitForJob` learn what happens to jobs.
 *
 * @publicApi
 */
export interface JobEventsOptions {
  /**
   * Events of jobs other processes run, through LISTEN/NOTIFY: the statements that make a
   * transition (the claim, the outcome write, progress, cancel, the reaper's rescue) also NOTIFY
   * the schema's `<schema>_job_events` channel, and this process LISTENs there (on a connection
   * of its own) while it has `@OnJobEvent` listeners or `waitForJob` calls. Off: no NOTIFY is
   * sent, only this process's own events are delivered, and `waitForJob` polls. A worker with
   * `worker.listen: false` sends but does not LISTEN. Default: false: the NOTIFY in every claim
   * and outcome write costs a busy worker 14-25% of its throughput (see the README).
   */
  remote?: boolean;
  /**
   * Most events waiting for `@OnJobEvent` listeners in this process; past it, events are dropped,
   * counted and logged (a listener slower than the queue can never slow the worker). Default: 10000.
   */
  bufferSize?: number;
  /** How often `waitForJob` reads the waited jobs when this process does not LISTEN. Default: 1000. */
  waitPollIntervalMs?: number;
  /**
   * Most rows of a job's log (`job_events`) that its runs' `ctx.log` lines and progress writes
   * may fill; past it they are dropped, and the run's outcome adds one row saying how many. The
   * queue's own rows (claimed, the outcome, cancelled, rescued) are always written. 0: lines and
   * progress rows are not kept. Default: 1000.
   */
  maxLogRowsPerJob?: number;
  /**
   * Whether a run that completes without a log line or progress write of its own writes its
   * `claimed` and `completed` rows. Off (the default), the log holds every run that logged,
   * reported progress, failed, was retried, snoozed, cancelled or rescued, and a plain
   * completion costs no row: on, every job's log is complete, at a cost the README gives.
   */
  logCompletedRuns?: boolean;
}

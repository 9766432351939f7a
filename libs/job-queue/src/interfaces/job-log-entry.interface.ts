/**
 * What a row of a job's log records: what the queue did with the job (`claimed`, `retrying`,
 * `completed`, `failed`, `cancelled`, `rescued`, `snoozed`), a progress write (`progress`), a
 * handler's `ctx.log` line (`log`), or how many of those the bound dropped (`dropped`).
 *
 * @publicApi
 */
export type JobLogKind =
  | 'claimed'
  | 'progress'
  | 'log'
  | 'retrying'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'rescued'
  | 'snoozed'
  | 'dropped';

/**
 * One row of a job's log (`QueueService.jobEvents`), in the order things happened.
 *
 * @publicApi
 */
export interface JobLogEntry {
  /** Increasing within a job: pass the last one read as `after` to read on. */
  id: string;
  jobId: string;
  /** The attempt the row belongs to, and its run's fencing token. */
  attempt: number;
  runToken: number;
  /**
   * When it happened: the database's clock for the queue's rows, and for `claimed` the claim's
   * time; the worker's clock for a `ctx.log` line (it was written up to `progressThrottleMs`
   * later).
   */
  at: Date;
  kind: JobLogKind;
  /**
   * `log`: the line; `retrying` and `failed`: the error's first line; `rescued`: why; `dropped`:
   * how many.
   */
  message: string | null;
  /**
   * `log`: the line's data; `progress`: `{ progress, stage }`; `claimed`: `{ workerId }`;
   * `dropped`: `{ dropped }`.
   */
  data: unknown;
}

/** @publicApi */
export interface JobLogReadOptions {
  /** Rows after this entry id (exclusive). Default: from the first. */
  after?: string;
  /** Most rows returned, 1 to 1000. Default: 100. */
  limit?: number;
}

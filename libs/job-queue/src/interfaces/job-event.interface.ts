import { JobStatus } from '../entities/job-status.enum';

/**
 * What happened to a job, as `@OnJobEvent` names it:
 * - `started`: a worker began a run (status `running`);
 * - `progress`: a progress write landed (`ctx.progress` or `QueueService.updateProgress`);
 * - `retrying`: an attempt failed with attempts left (status `scheduled` or `pending`);
 * - `completed`, `failed` (for good), `cancelled`: the job finished;
 * - `rescued`: the reaper took the job back from a worker that stopped heartbeating (status
 *   `scheduled`/`pending`, or `failed` on its last attempt, which is also a `failed` event);
 * - `snoozed`: the handler snoozed it (`SnoozeJob`), the attempt given back.
 *
 * @publicApi
 */
export type JobEventName =
  | 'started'
  | 'progress'
  | 'retrying'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'rescued'
  | 'snoozed';

/**
 * One event of a job's life, as `@OnJobEvent` methods receive it: ids and states, never the job's
 * `data` or `result` (read them with `QueueService.getJob(id)` when you need them).
 *
 * @publicApi
 */
export interface JobEvent {
  event: JobEventName;
  /** The job's id (bigint as a decimal string, as `Job.id`). */
  id: string;
  /** The job's type. */
  type: string;
  /** Its status right after the transition. */
  status: JobStatus;
  /** Its attempt count right after the transition (a snooze gives one back). */
  attempt: number;
  /** Its progress 0..100 and stage as the transition left them. */
  progress: number;
  stage: string | null;
}

/** Options of `@OnJobEvent`. @publicApi */
export interface OnJobEventOptions {
  /** Only jobs of this type (or these types). Default: every type. */
  type?: string | string[];
}

/** Options of `QueueService.waitForJob`. @publicApi */
export interface WaitForJobOptions {
  /** Longest wait, in ms (a positive integer): then it rejects with `JobWaitTimeoutError`. */
  timeoutMs: number;
  /** Aborting it ends the wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

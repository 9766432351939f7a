import { EntityManager } from 'typeorm';
import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';

/** What `JobQueueTester.drain` runs. @publicApi */
export interface DrainOptions {
  /** Only these job types (each must have a `@JobHandler`). Default: every handled type. */
  types?: string[];
  /**
   * Most runs before `drain` gives up with a `JobQueueAssertionError` while jobs are still due
   * (a handler that re-enqueues itself would otherwise loop forever). Default: 1000.
   */
  maxJobs?: number;
  /** A test's transaction (see `JobQueueTester.withRollback`): the drain goes through it. */
  manager?: EntityManager;
}

/** What became of one run during a drain. @publicApi */
export type DrainOutcome = 'completed' | 'failed' | 'retried' | 'snoozed' | 'cancelled';

/** One run of a drain: the job as the run left it, and what became of it. @publicApi */
export interface DrainRun {
  job: Job;
  outcome: DrainOutcome;
}

/** What `drain` ran, counted by outcome, and every run in the order it was claimed. @publicApi */
export interface DrainSummary {
  completed: number;
  failed: number;
  retried: number;
  snoozed: number;
  cancelled: number;
  runs: DrainRun[];
}

/** What `perform` saw the handler do besides returning. @publicApi */
export interface PerformResult<R = unknown> {
  /** The handler's return value, through JSON as the worker stores it. */
  result: R;
  /** Each `ctx.progress(percent, stage?)` call, in order. */
  progress: Array<{ percent: number; stage?: string }>;
  /** Each `ctx.log(message, data?)` line, in order. */
  logs: Array<{ message: string; data?: unknown }>;
}

/** Which enqueued jobs an assertion looks at. @publicApi */
export interface EnqueuedJobFilter {
  type?: string;
  /** Compared with the stored `data`: every property given must be equal, deeply (a partial match). */
  data?: unknown;
  priority?: number;
  /** Due at this time, to the millisecond. */
  runAt?: Date;
  /** Only jobs in these statuses. Default: any. */
  status?: JobStatus | JobStatus[];
  /** Through a caller's transaction: what it enqueued before it commits. */
  manager?: EntityManager;
}

/** `expectEnqueued`'s expectation: a filter, and how many must match (default: at least one). @publicApi */
export interface EnqueuedJobExpectation extends EnqueuedJobFilter {
  count?: number;
}

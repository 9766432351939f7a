import { LoggerService } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Job } from '../entities/job.entity';
import type { SnoozeJob } from '../errors/snooze-job';
import type { DependencyResults } from './flow.interface';

/**
 * Terminology:
 * - job: one row of `jobs`; its `jobType` names the handler that runs it.
 * - handler: a provider method marked `@JobHandler(jobType)`.
 * - worker: a process that imports `JobQueueModule` with `worker` enabled; it claims jobs and
 *   runs their handlers. Many workers on many machines share one database.
 * - attempt: one claim and run of a job; a failed attempt is retried after a backoff delay.
 * - run: what one claim starts; its fencing token (`job.runToken`) is new with every claim.
 *   Only the run holding the job's current token, while the job is claimed or running, can write
 *   anything for it (progress, heartbeat, outcome): a run whose job was cancelled, retried or
 *   taken back since is superseded, and its writes change nothing.
 */

/**
 * What a handler receives next to its job.
 *
 * @publicApi
 */
export interface JobContext<T = unknown> {
  job: Job<T>;
  /**
   * Records progress 0..100 and, when given, the current stage. Writes are throttled
   * (`progressThrottleMs`); the last value always lands, at the latest with the job's completion.
   * Only this run's: once the job was cancelled, retried or taken back, nothing it writes lands.
   */
  progress(percent: number, stage?: string): Promise<void>;
  /**
   * Aborts when the job is cancelled, times out or the worker shuts down; `signal.reason` says
   * which (`JobCancelledError`, `JobTimeoutError`, `WorkerShutdownError`). A cancel reaches it at
   * once on whichever node runs the job (LISTEN), else at the worker's next heartbeat; so does
   * the discovery that the job was taken back from this run (`JobCancelledError` too). Long
   * handlers should check it or pass it on (fetch, streams).
   */
  signal: AbortSignal;
  /** A logger whose context names the job type and id. */
  logger: LoggerService;
  /**
   * `return ctx.snooze(delayMs)` runs the job again after `delayMs` without spending an attempt,
   * as `throw new SnoozeJob(delayMs)` does (this returns one); declare the handler's return type
   * as `Promise<Result | SnoozeJob>`. A bad delay throws `InvalidJobInputError` (`snoozeMs`).
   */
  snooze(delayMs: number): SnoozeJob;
  /**
   * Adds a line to the job's log (`QueueService.jobEvents`), with `data` if given: a line is
   * kept in memory and written with the run's next progress write or its outcome, at the latest
   * `progressThrottleMs` later, never in a statement of its own. Only this run's: once the job
   * was cancelled, retried or taken back, its lines are not written. At most
   * `events.maxLogRowsPerJob` rows per job; lines past it are dropped, and a last row says how
   * many. Checked at once: a message that is not a string of at most 2000 characters PostgreSQL
   * can store, or `data` that is not JSON of at most 4096 bytes, throws `InvalidJobInputError`
   * (`message` or `data`), which never quotes either.
   */
  log(message: string, data?: unknown): void;
  /**
   * The run's transaction, with `@JobHandler(type, { transaction: true })` (and inside
   * `ctx.transaction(fn)`, the same as `fn`'s manager): what the handler writes through it
   * commits together with the job's completion, or not at all (a throw, a timeout, a cancel, a
   * retry or a rescue of the job meanwhile roll it back). Reading it anywhere else throws.
   */
  readonly manager: EntityManager;
  /**
   * Runs `fn` in a transaction that also completes the job, with `fn`'s value as its result:
   * when this resolves, `fn`'s writes and the job's completion have committed together; if `fn`
   * throws, or the run no longer holds its job when it commits (cancelled, retried, taken back:
   * then this rejects with `JobCancelledError`), nothing of it lands. After it resolved the job
   * is done: what the handler returns or throws later, and its later progress and log lines,
   * change nothing. In a handler with `transaction: true` it runs `fn` in the run's own
   * transaction instead, and the job completes when the handler returns.
   */
  transaction<R>(fn: (manager: EntityManager) => Promise<R>): Promise<R>;
  /**
   * The job's dependencies (`dependsOn`, a flow's steps) as they finished: each one's status,
   * result (bounded by `maxResultBytes` when it was stored) and the first line of its error,
   * by job id and by step name, with those that did not complete under `failed` (only with
   * `onDependencyFailure: 'continue'` can any have). Read from the database at each call; a job
   * without dependencies gets empty ones.
   */
  dependencyResults(): Promise<DependencyResults>;
}

/** The shape of a handler method. @publicApi */
export type JobHandlerFunction<T = unknown, R = unknown> = (
  job: Job<T>,
  ctx: JobContext<T>,
) => R | Promise<R>;

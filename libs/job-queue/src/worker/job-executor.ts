import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';
import { JobContext } from '../interfaces/job-context.interface';
import { JobHandlerRegistry, RegisteredJobHandler } from '../discovery/job-handler.registry';
import {
  InvalidJobInputError,
  JobCancelledError,
  JobTimeoutError,
  PermanentJobError,
  SnoozeJob,
  WorkerShutdownError,
} from '../errors';
import { finishJobs, NO_LOG_ROWS, SNOOZED } from '../sql/finish-jobs.query';
import { serialiseData } from '../validation/json-data';
import { JobCompleter, outcomeEvent, QueuedOutcome } from './job-completer';
import { HandlerContext, RunTransactions } from './handler-context';
import { RunTransaction } from './run-transaction';
import { databaseErrorText, typedDatabaseError } from '../errors/database-error.util';
import { ClaimWakeup } from '../periodic/claim-wakeup';
import { QueueClock } from '../periodic/queue-clock';
import { UnwrittenProgress } from './job-progress.reporter';
import { RunLog } from './run-log';
import { RunningJob } from './running-job';
import { RunningJobs } from './running-jobs';
import { RunTimes } from './run-times';
import { retryDelayMs, retryPolicyFor, retryPolicyOfJob } from '../retry/retry-policy';
import { errorText } from './error-text';
import { JobEventStream } from '../events/job-event-stream';
import { jobEvent, JobEventSubject } from '../events/job-event-payload';
import { JobQueueInstruments } from '../instrumentation/job-queue-instruments';
import { JobRunEnd } from '../instrumentation/job-queue-instrument.interface';

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The `SnoozeJob` a handler threw or returned (`ctx.snooze()`), if it did either. */
function snoozeOf(settled: Settled): SnoozeJob | undefined {
  const value = settled.ok ? settled.value : settled.error;
  return value instanceof SnoozeJob ? value : undefined;
}

/** What the outcome's event says of the job, but for what the outcome changes. */
function subjectOf(job: Job): JobEventSubject {
  return {
    id: job.id,
    jobType: job.jobType,
    status: job.status,
    attempts: job.attempts,
    progress: job.progress,
    currentStage: job.currentStage,
  };
}

/**
 * Whether writing `job`'s outcome may update other jobs' rows, through the triggers that hand its
 * concurrency key's slot to a waiting job or count it done for its dependants. A job given
 * dependants after its claim is not seen here: two writes that then lock the same rows in
 * opposite orders end in a deadlock, which the completer retries like any passing failure.
 */
function updatesOtherJobs(job: Job): boolean {
  return (job.concurrencyKey ?? null) !== null || job.hasDependants === true;
}

/** How a run ended, by the outcome it queued. */
function runEndOf(outcome: QueuedOutcome): JobRunEnd {
  switch (outcome.status) {
    case JobStatus.Completed:
      return 'completed';
    case JobStatus.Failed:
      return 'failed';
    case SNOOZED:
      return 'snoozed';
    default:
      return 'retried';
  }
}

/** A handler's result as stored: JSON jsonb holds as given, at most `maxResultBytes`. */
function resultJsonOf(value: unknown, maxResultBytes: number): string {
  return value == null ? 'null' : serialiseData('result', value, maxResultBytes, 'maxResultBytes');
}

const TRANSACTION_AFTER_COMPLETION =
  'ctx.transaction: an earlier ctx.transaction of this run completed the job; ' +
  'nothing more can be written for it';
const TRANSACTIONS_OVERLAP =
  'ctx.transaction: one at a time per run; a second call began before the first settled';

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * `last_error` of an attempt whose result cannot be stored: what is wrong and where (a path such
 * as `result.items[3]`), never the result's text. A throw other than the check's own (a getter, a
 * `toJSON`) is named by kind only: its message may quote the result.
 */
function resultRefused(error: unknown): string {
  const why =
    error instanceof InvalidJobInputError
      ? error.message
      : `serialising it threw ${error instanceof Error ? error.name : 'a non-error'}`;
  return errorText(`Handler result not stored: ${why}`);
}

/** Where a run writes instead of the pool and the completer (see `JobExecutor.start`). */
export interface RunThrough {
  db: EntityManager;
  outcome: (outcome: QueuedOutcome) => void;
}

/**
 * Runs one claimed job: calls its handler with `(job, ctx)`, enforces the timeout, and turns
 * what happened into an outcome for the completer: completed with the result, retried after a
 * backoff, snoozed (`SnoozeJob` thrown or returned: later, the attempt given back), or failed.
 * Each run is tracked by job id and fencing token, and its outcome carries the token. An abort
 * for shutdown or cancellation queues nothing: shutdown hands the job back, and a cancelled (or
 * retried, or taken back) job is no longer this run's to finish.
 */
@Injectable()
export class JobExecutor {
  /** Called whenever a slot frees up (with the type it held), so the poller can claim more. */
  onSlotFreed: (jobType: string) => void = () => undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly running: RunningJobs,
    private readonly completer: JobCompleter,
    private readonly events: JobEventStream,
    private readonly runTimes: RunTimes,
    private readonly instruments: JobQueueInstruments,
    private readonly wakeup: ClaimWakeup,
    private readonly clock: QueueClock,
  ) {}

  /**
   * Starts the job and returns at once; the job occupies a slot until it settles. `through`
   * (the testing kit's transaction): the run's progress goes through `db` and its outcome to
   * `outcome` instead of the completer.
   */
  start(job: Job, through?: RunThrough): void {
    const entry = new RunningJob(job);
    this.running.add(entry);
    if (this.events.active) this.events.emit([jobEvent('started', job)]);
    void this.run(entry, through);
  }

  private async run(entry: RunningJob, through: RunThrough | undefined): Promise<void> {
    const startedAt = performance.now();
    try {
      const outcome = await this.execute(entry, through);
      if (outcome && through) through.outcome(outcome);
      else if (outcome) this.completer.push(outcome);
    } finally {
      this.runTimes.record(entry.job.jobType, performance.now() - startedAt);
      this.running.delete(entry);
      this.onSlotFreed(entry.job.jobType);
    }
  }

  /** The outcome to write, or `undefined` when there is none (shutdown, cancellation). */
  private async execute(
    entry: RunningJob,
    through: RunThrough | undefined,
  ): Promise<QueuedOutcome | undefined> {
    const { job } = entry;
    const scope = this.instruments.runStarted(job);
    const handler = this.registry.get(job.jobType);
    if (!handler) {
      // Only possible with `worker.jobTypes` naming a type without a handler (checked at boot).
      const failed = this.failure(job, undefined, `No handler for job type "${job.jobType}"`, true);
      scope.ended({ end: runEndOf(failed), runMs: 0 });
      return this.withLog(failed, job, undefined);
    }
    // The run's own transaction (`transaction: true`), opened below; a test's joins its manager.
    let runTx: RunTransaction | undefined;
    const transactional = handler.options.transaction;
    const transactions: RunTransactions = {
      get run() {
        return runTx ?? (transactional ? through?.db : undefined);
      },
      complete: (context, fn) =>
        through ? fn(through.db) : this.completeInTransaction(entry, handler, context, fn),
    };
    const ctx = new HandlerContext(
      entry,
      through?.db ?? this.dataSource,
      this.options.schema,
      this.options.progressThrottleMs,
      this.running.superseded,
      this.events,
      this.options.events.remote ? this.options.workerId : undefined,
      this.options.events.maxLogRowsPerJob,
      transactions,
    );
    const { timeoutMs } = handler.options;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => entry.abort(new JobTimeoutError(timeoutMs)), timeoutMs);
    let settled: Settled | undefined;
    const called = performance.now();
    try {
      if (transactional && !through) {
        try {
          runTx = await RunTransaction.open(this.dataSource);
        } catch (error) {
          const why = `Could not begin the run's transaction: ${databaseErrorText(error)}`;
          settled = { ok: false, error: new Error(why) };
        }
      }
      settled ??= await scope.wrap(() => this.runHandler(handler, entry, ctx));
    } finally {
      if (timer) clearTimeout(timer);
    }
    const runMs = performance.now() - called;
    // Read the abort state as the handler settled: a shutdown that starts while the last
    // progress write is in flight must not throw a finished job's result away.
    const { aborted, abortReason: reason } = entry;
    if (ctx.completedInTransaction) {
      // `ctx.transaction` committed the job's completion: what the handler did after is moot.
      scope.ended({ end: 'completed', runMs });
      return;
    }
    // Not to be committed: a `ctx.transaction` the run was aborted in (its handler may still be
    // in it), or the run's own unless it completes (below). Awaited only when there is one: an
    // `await` of nothing still makes promises, and every short job would pay for them.
    if (ctx.current) await ctx.current.rollback(false);
    const closing = ctx.close();
    const unwritten = closing && (await closing);
    if (reason instanceof WorkerShutdownError || reason instanceof JobCancelledError) {
      await runTx?.rollback(false);
      scope.ended({
        end: reason instanceof JobCancelledError ? 'cancelled' : 'interrupted',
        runMs,
      });
      return;
    }

    let outcome: QueuedOutcome;
    let thrown: unknown;
    const snooze = aborted ? undefined : snoozeOf(settled);
    if (snooze) {
      outcome = this.snoozed(job, handler, snooze.delayMs);
    } else if (settled.ok && !aborted) {
      outcome = this.success(job, handler, settled.value);
    } else {
      const error = settled.ok ? reason : settled.error;
      thrown = reason instanceof JobTimeoutError ? reason : error;
      outcome = this.failure(job, handler, errorText(thrown), thrown instanceof PermanentJobError);
    }
    const final = this.withRunState(outcome, ctx, unwritten);
    if (runTx && final.status === JobStatus.Completed) {
      const landed = await this.commitCompletion(runTx, final);
      if (landed === 'superseded') {
        scope.ended({ end: 'cancelled', runMs });
        return;
      }
      scope.ended({ end: runEndOf(landed ?? final), runMs, error: thrown });
      return landed;
    }
    if (runTx) await runTx.rollback(!aborted);
    scope.ended({ end: runEndOf(final), runMs, error: thrown });
    return final;
  }

  /** The outcome with what the run leaves unwritten (progress, log rows) and its event's view. */
  private withRunState(
    outcome: QueuedOutcome,
    ctx: HandlerContext,
    unwritten: UnwrittenProgress | undefined,
  ): QueuedOutcome {
    const { job } = ctx;
    if (unwritten) {
      outcome.progress = unwritten.progress;
      outcome.stage = unwritten.stage ?? null;
    }
    const last = unwritten ?? ctx.landedProgress;
    // The subject already tells the job's progress as claimed: one reported since replaces it.
    if (last) {
      outcome.subject = {
        ...outcome.subject,
        progress: last.progress,
        currentStage: unwritten?.stage ?? ctx.landedProgress?.stage ?? job.currentStage,
      };
    }
    if (unwritten) ctx.runLog?.progress(unwritten.progress, unwritten.stage);
    return this.withLog(outcome, job, ctx.runLog);
  }

  /**
   * Writes a completion in the run's transaction, fenced like the completer's write, and
   * commits. Resolves `undefined` once both committed; `'superseded'` when the run no longer
   * held its job (the transaction is rolled back: nothing of the handler's lands); or, when the
   * write or the commit failed, the attempt as failed, for the completer to write outside it.
   */
  private async commitCompletion(
    tx: RunTransaction,
    outcome: QueuedOutcome,
  ): Promise<QueuedOutcome | 'superseded' | undefined> {
    try {
      const superseded = await finishJobs(
        tx.manager,
        this.options.schema,
        this.options.workerId,
        [outcome],
        this.options.events.remote,
        this.clock.now(),
      );
      if (superseded.length > 0) {
        await tx.rollback(true);
        this.running.superseded.record('outcome', outcome.id, outcome.runToken);
        return 'superseded';
      }
      await tx.commit();
    } catch (error) {
      await tx.rollback(true);
      return {
        ...outcome,
        ...outcome.ifRefused(),
        resultJson: null,
        lastError:
          `The run's transaction could not commit: ${databaseErrorText(error)}. ` +
          "The handler's writes and its result were rolled back.",
        logOutcome: true,
      };
    }
    if (this.events.active) this.events.emit([outcomeEvent(outcome, outcome.subject)]);
    if (this.registry.limitedAcrossNodes(outcome.subject.jobType)) this.wakeup.jobsClaimable();
    return undefined;
  }

  /**
   * `ctx.transaction(fn)` in a handler without `transaction: true`: `fn` in a transaction of its
   * own that also completes the job with `fn`'s value, then commits. Once it has, the run is
   * over: nothing renews its lease, and what the handler does next writes nothing.
   */
  private async completeInTransaction<R>(
    entry: RunningJob,
    handler: RegisteredJobHandler,
    ctx: HandlerContext,
    fn: (manager: EntityManager) => Promise<R>,
  ): Promise<R> {
    if (ctx.completedInTransaction) throw new Error(TRANSACTION_AFTER_COMPLETION);
    if (ctx.current) throw new Error(TRANSACTIONS_OVERLAP);
    if (entry.aborted) throw entry.abortReason;
    let tx: RunTransaction;
    try {
      tx = await RunTransaction.open(this.dataSource);
    } catch (error) {
      throw typedDatabaseError(error);
    }
    ctx.current = tx;
    try {
      let value: R;
      try {
        value = await fn(tx.manager);
        // Checked before anything is written: a result jsonb cannot hold rolls `fn` back.
        resultJsonOf(value, this.options.maxResultBytes);
      } catch (error) {
        await tx.rollback(true);
        throw error;
      }
      if (entry.aborted || tx.isClosed) {
        await tx.rollback(true);
        throw entry.abortReason ?? new JobCancelledError(entry.job.id);
      }
      const unwritten = await ctx.close();
      const outcome = this.withRunState(this.success(entry.job, handler, value), ctx, unwritten);
      const landed = await this.commitCompletion(tx, outcome);
      if (landed === 'superseded') {
        const cancelled = new JobCancelledError(entry.job.id);
        entry.abort(cancelled);
        throw cancelled;
      }
      if (landed) throw new Error(landed.lastError ?? 'The transaction could not commit');
      ctx.completedInTransaction = true;
      entry.finished = true;
      return value;
    } finally {
      ctx.current = undefined;
    }
  }

  /**
   * The outcome with the rows it writes to the job's log: the run's rows still to write, then
   * its own row. A run that completes with no log of its own writes no rows unless
   * `events.logCompletedRuns` (a row per claim and per completion is what the log would cost
   * every short job); any other outcome writes its row, and the run's `claimed` row before it.
   */
  private withLog(outcome: QueuedOutcome, job: Job, runLog: RunLog | undefined): QueuedOutcome {
    const logOutcome =
      outcome.status !== JobStatus.Completed ||
      this.options.events.logCompletedRuns ||
      runLog?.used === true;
    outcome.logOutcome = logOutcome;
    if (!logOutcome) return outcome;
    outcome.logRows = runLog ? runLog.takeForOutcome() : RunLog.claimedOnly(job);
    return outcome;
  }

  /**
   * The handler's result, or what it threw or rejected with, or the abort reason when the job is
   * aborted first: a handler that ignores its signal cannot hold the slot forever. A handler
   * that returns without a promise settles at once.
   */
  private runHandler(
    handler: RegisteredJobHandler,
    entry: RunningJob,
    ctx: JobContext,
  ): Settled | Promise<Settled> {
    let returned: unknown;
    try {
      returned = handler.run(entry.job, ctx);
    } catch (error) {
      return { ok: false, error };
    }
    if (!isPromiseLike(returned)) return { ok: true, value: returned };
    return new Promise<Settled>((resolve) => {
      entry.onAbort((reason) => resolve({ ok: false, error: reason }));
      returned.then(
        (value) => resolve({ ok: true, value }),
        (error: unknown) => resolve({ ok: false, error }),
      );
    });
  }

  /**
   * A completion, with its result checked like `data` is at enqueue: JSON that jsonb stores as
   * given, at most `maxResultBytes`. A result that fails the check fails the attempt instead, so
   * it never reaches (and never fails) the batched completion write.
   */
  private success(job: Job, handler: RegisteredJobHandler, value: unknown): QueuedOutcome {
    let resultJson: string;
    try {
      resultJson = resultJsonOf(value, this.options.maxResultBytes);
    } catch (error) {
      return this.failure(job, handler, resultRefused(error), false);
    }
    // Every field written out, here and in the other two outcomes: spread from one object of the
    // fields they share, each outcome took V8's slow path (bench/README.md, "Shaped by
    // measurement").
    return {
      id: job.id,
      runToken: job.runToken,
      subject: subjectOf(job),
      updatesOtherJobs: updatesOtherJobs(job),
      status: JobStatus.Completed,
      resultJson,
      lastError: null,
      retryDelayMs: null,
      progress: null,
      stage: null,
      logRows: NO_LOG_ROWS,
      logOutcome: false,
      ifRefused: () => this.attemptFailed(job, handler, false),
    };
  }

  /**
   * A snooze: the job waits `delayMs` and its attempt is given back (the write undoes this run's
   * claim). If the database refuses the write, the attempt counts as failed, as for any outcome.
   */
  private snoozed(job: Job, handler: RegisteredJobHandler, delayMs: number): QueuedOutcome {
    return {
      id: job.id,
      runToken: job.runToken,
      subject: subjectOf(job),
      updatesOtherJobs: updatesOtherJobs(job),
      status: SNOOZED,
      resultJson: null,
      lastError: null,
      retryDelayMs: delayMs,
      progress: null,
      stage: null,
      logRows: NO_LOG_ROWS,
      logOutcome: false,
      ifRefused: () => this.attemptFailed(job, handler, false),
    };
  }

  /**
   * A failed attempt: retried after its backoff while attempts are left, else failed. The limit
   * and backoff are the job's row's (fixed at enqueue or by its first claim), so every node
   * decides alike; the handler's or module's apply only to a row claimed without them.
   */
  private failure(
    job: Job,
    handler: RegisteredJobHandler | undefined,
    lastError: string,
    permanent: boolean,
  ): QueuedOutcome {
    const failed = this.attemptFailed(job, handler, permanent);
    return {
      id: job.id,
      runToken: job.runToken,
      subject: subjectOf(job),
      updatesOtherJobs: updatesOtherJobs(job),
      ...failed,
      resultJson: null,
      lastError,
      progress: null,
      stage: null,
      logRows: NO_LOG_ROWS,
      logOutcome: false,
      ifRefused: () => failed,
    };
  }

  /** What a failed attempt of `job` leads to: a retry after its backoff, or `failed`. */
  private attemptFailed(
    job: Job,
    handler: RegisteredJobHandler | undefined,
    permanent: boolean,
  ): ReturnType<QueuedOutcome['ifRefused']> {
    const policy = retryPolicyOfJob(job, retryPolicyFor(handler?.options, this.options));
    const retry = !permanent && job.attempts < policy.maxAttempts;
    return {
      status: retry ? JobStatus.Pending : JobStatus.Failed,
      retryDelayMs: retry ? retryDelayMs(job.attempts, policy.backoff) : null,
    };
  }
}

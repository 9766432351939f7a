import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../job-queue.options';
import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';
import { JobContext } from '../interfaces/job-context.interface';
import { JobHandlerRegistry, RegisteredJobHandler } from '../discovery/job-handler.registry';
import {
  JobCancelledError,
  JobTimeoutError,
  PermanentJobError,
  WorkerShutdownError,
} from '../errors';
import { JobOutcome } from '../sql/finish-jobs.query';
import { JobCompleter } from './job-completer';
import { JobProgressReporter } from './job-progress.reporter';
import { RunningJobs } from './running-jobs';
import { retryDelayMs } from './retry-policy';
import { errorText } from './error-text';

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs one claimed job: calls its handler with `(job, ctx)`, enforces the timeout, and turns
 * what happened into an outcome for the completer: completed with the result, retried after a
 * backoff, or failed. An abort for shutdown or cancellation queues nothing: shutdown hands the
 * job back, and a cancelled job is already finished.
 */
@Injectable()
export class JobExecutor {
  /** Called whenever a slot frees up, so the poller can claim more. */
  onSlotFreed: () => void = () => undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly running: RunningJobs,
    private readonly completer: JobCompleter,
  ) {}

  /** Starts the job and returns at once; the job occupies a slot until it settles. */
  start(job: Job): void {
    const controller = new AbortController();
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    this.running.add({ job, controller, done });
    void this.execute(job, controller).finally(() => {
      this.running.delete(job.id);
      finished();
      this.onSlotFreed();
    });
  }

  private async execute(job: Job, controller: AbortController): Promise<void> {
    const handler = this.registry.get(job.jobType);
    if (!handler) {
      // Only possible with `worker.jobTypes` naming a type without a handler (checked at boot).
      this.completer.push(
        this.failure(job, undefined, `No handler for job type "${job.jobType}"`, true),
      );
      return;
    }
    const logger = new Logger(`JobQueue:${job.jobType}#${job.id}`);
    const reporter = new JobProgressReporter(
      this.dataSource,
      job.id,
      this.options.progressThrottleMs,
      logger,
    );
    const ctx: JobContext = {
      job,
      signal: controller.signal,
      logger,
      progress: (percent, stage) => reporter.report(percent, stage),
    };
    const timer =
      handler.options.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => controller.abort(new JobTimeoutError(handler.options.timeoutMs!)),
            handler.options.timeoutMs,
          );
    let settled: Settled;
    try {
      settled = await this.runHandler(handler, job, ctx, controller.signal);
    } finally {
      clearTimeout(timer);
    }
    // Read the abort state as the handler settled: a shutdown that starts while the last
    // progress write is in flight must not throw a finished job's result away.
    const aborted = controller.signal.aborted;
    const reason: unknown = aborted ? controller.signal.reason : undefined;
    const unwritten = await reporter.takeUnwritten();
    if (reason instanceof WorkerShutdownError || reason instanceof JobCancelledError) return;

    let outcome: JobOutcome;
    if (settled.ok && !aborted) {
      outcome = this.success(job, settled.value);
    } else {
      const error = settled.ok ? reason : settled.error;
      const thrown = reason instanceof JobTimeoutError ? reason : error;
      outcome = this.failure(job, handler, errorText(thrown), thrown instanceof PermanentJobError);
    }
    if (unwritten) {
      outcome.progress = unwritten.progress;
      outcome.stage = unwritten.stage ?? null;
    }
    this.completer.push(outcome);
  }

  /**
   * The handler's result, or what it threw or rejected with, or the abort reason when the signal
   * fires first: a handler that ignores its signal cannot hold the slot forever.
   */
  private runHandler(
    handler: RegisteredJobHandler,
    job: Job,
    ctx: JobContext,
    signal: AbortSignal,
  ): Promise<Settled> {
    return new Promise<Settled>((resolve) => {
      const onAbort = () => resolve({ ok: false, error: signal.reason });
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => handler.run(job, ctx))
        .then(
          (value) => resolve({ ok: true, value }),
          (error: unknown) => resolve({ ok: false, error }),
        )
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private success(job: Job, value: unknown): JobOutcome {
    let resultJson: string;
    try {
      resultJson = JSON.stringify(value === undefined ? null : value) ?? 'null';
    } catch (error) {
      return this.failure(
        job,
        this.registry.get(job.jobType),
        `Handler result is not JSON-serialisable: ${(error as Error).message}`,
        false,
      );
    }
    return {
      id: job.id,
      attempt: job.attempts,
      status: JobStatus.Completed,
      resultJson,
      lastError: null,
      retryDelayMs: null,
      progress: null,
      stage: null,
    };
  }

  private failure(
    job: Job,
    handler: RegisteredJobHandler | undefined,
    lastError: string,
    permanent: boolean,
  ): JobOutcome {
    const maxAttempts =
      job.maxAttempts ?? handler?.options.maxAttempts ?? this.options.defaultMaxAttempts;
    const retry = !permanent && job.attempts < maxAttempts;
    return {
      id: job.id,
      attempt: job.attempts,
      status: retry ? JobStatus.Pending : JobStatus.Failed,
      resultJson: null,
      lastError,
      retryDelayMs: retry
        ? retryDelayMs(job.attempts, handler?.options.backoff ?? this.options.backoff)
        : null,
      progress: null,
      stage: null,
    };
  }
}

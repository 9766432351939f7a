import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  DEFAULT_COMPLETION_BATCH_SIZE,
  DEFAULT_COMPLETION_FLUSH_MS,
  JOB_QUEUE_DATA_SOURCE,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../job-queue.options';
import { finishJobs, JobOutcome } from '../sql/finish-jobs.query';
import { FailureBackoff } from './failure-backoff';
import { LogPeriod } from './log-period';
import { RunningJobs, RunRef } from './running-jobs';
import { databaseErrorText } from '../errors/database-error.util';

/**
 * Writes attempt outcomes (completed, failed, retry) in batches: one statement per flush, a
 * flush every few ms or every `DEFAULT_COMPLETION_BATCH_SIZE` outcomes. An outcome stays queued
 * until its write succeeds, so a database hiccup delays it instead of losing it (if the process
 * dies first, the reaper re-runs the job: at-least-once). An outcome whose run no longer holds
 * its job (cancelled, retried or taken back since) changes nothing and is counted as superseded.
 */
@Injectable()
export class JobCompleter {
  private readonly logger = new Logger('JobQueue');
  private queue: JobOutcome[] = [];
  private inFlight: JobOutcome[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** Set by drain(): after shutdown nothing is rescheduled, so no timer keeps the process alive. */
  private drained = false;
  private readonly backoff = new FailureBackoff();
  private readonly outageLog = new LogPeriod();

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
  ) {}

  /** Runs whose outcome is not written yet: their lease must still be renewed. */
  pendingRuns(): RunRef[] {
    return [...this.inFlight, ...this.queue].map((outcome) => ({
      id: outcome.id,
      token: outcome.runToken,
    }));
  }

  push(outcome: JobOutcome): void {
    this.queue.push(outcome);
    if (this.queue.length >= DEFAULT_COMPLETION_BATCH_SIZE) this.schedule(0);
    else this.schedule(DEFAULT_COMPLETION_FLUSH_MS);
  }

  /** Back to writing in the background after a drain: the worker was started again. */
  resume(): void {
    this.drained = false;
  }

  /** Writes everything queued; on shutdown, keeps trying until `deadline` (epoch ms). */
  async drain(deadline: number): Promise<void> {
    this.drained = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    while ((this.queue.length > 0 || this.flushing) && Date.now() < deadline) {
      await (this.flushing ?? this.flush());
      if (this.queue.length > 0 && this.backoff.failing) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(200, deadline - Date.now())));
      }
    }
    if (this.queue.length > 0) {
      this.logger.error(
        `${this.queue.length} job outcome(s) could not be written before shutdown; ` +
          `those jobs will be re-run once their lease expires.`,
      );
    }
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.flushing || this.drained) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }

  private flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return this.flushing ?? Promise.resolve();
    this.inFlight = this.queue.splice(0, DEFAULT_COMPLETION_BATCH_SIZE);
    this.flushing = this.write(this.inFlight).finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.schedule(this.backoff.failing ? this.backoff.delayMs : 0);
    });
    return this.flushing;
  }

  private async write(batch: JobOutcome[]): Promise<void> {
    try {
      const superseded = await finishJobs(this.dataSource, this.options.workerId, batch);
      for (const outcome of superseded) {
        this.running.superseded.record('outcome', outcome.id, outcome.run_token);
      }
      this.inFlight = [];
      this.backoff.succeeded();
      this.outageLog.reset();
    } catch (error) {
      this.queue.unshift(...batch);
      this.inFlight = [];
      this.backoff.failed();
      if (this.outageLog.due()) {
        this.logger.error(
          `Could not record ${this.queue.length} job outcome(s) ` +
            `(${this.backoff.failures} failure(s) in a row, retrying every ` +
            `${this.backoff.delayMs} ms): ${databaseErrorText(error)}`,
        );
      }
    }
  }
}

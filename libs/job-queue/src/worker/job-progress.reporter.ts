import { Logger } from '@nestjs/common';
import { JobCancelledError } from '../errors';
import { databaseErrorText } from '../errors/database-error.util';
import { checkProgress, checkStage } from '../validation/job-input.checks';
import { updateRunProgress } from '../sql/update-progress.query';
import { RunningJob } from './running-job';
import { SupersededWrites } from './superseded-writes';
import { Queryable } from '../sql/queryable';
import { JobEventStream } from '../events/job-event-stream';
import { jobEvent } from '../events/job-event-payload';
import { RunLog } from './run-log';

/** A progress value no write has carried yet. */
export interface UnwrittenProgress {
  progress: number;
  stage: string | undefined;
}

/**
 * `ctx.progress` and `ctx.log` for one run of a job: at most one write per `throttleMs`; progress
 * calls in between only keep the newest value, log lines wait in the run's log (`RunLog`), and
 * both go out when the period ends, in one statement. Whatever is still unwritten when the
 * handler returns is handed to the completion write (`takeUnwritten`, and the log's rows), so
 * the last value and every kept line land.
 *
 * Every write carries the run's fencing token: once the job was cancelled, retried or taken back
 * the write changes nothing, is counted as superseded, and aborts the run (if nothing did yet).
 */
export class JobProgressReporter {
  private lastWriteAt = 0;
  private unwritten: UnwrittenProgress | undefined;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;
  /** The last value a write landed with: what the job's row holds. */
  landed: UnwrittenProgress | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly schema: string,
    private readonly run: RunningJob,
    private readonly throttleMs: number,
    private readonly logger: Logger,
    private readonly superseded: SupersededWrites,
    private readonly events: JobEventStream,
    /** This process's workerId when writes notify their event (`events.remote`). */
    private readonly notifyOrigin: string | undefined,
    /** The run's log rows; a write takes what waits there. */
    readonly log: RunLog,
  ) {}

  /** Keeps a log line (already checked) for the next write, which it schedules. */
  logLine(message: string, dataJson: string | null): void {
    if (this.closed || !this.log.line(message, dataJson)) return;
    const wait = this.lastWriteAt + this.throttleMs - Date.now();
    this.scheduleWrite(Math.max(wait, 0));
  }

  /** Validates at once (bad values throw to the handler), writes now or at the period's end. */
  async report(progress: number, stage?: string): Promise<void> {
    const value = {
      progress: checkProgress('progress', progress),
      stage: checkStage('stage', stage),
    };
    if (this.closed) return;
    this.unwritten = { progress: value.progress, stage: value.stage ?? this.unwritten?.stage };
    const wait = this.lastWriteAt + this.throttleMs - Date.now();
    if (wait <= 0 && !this.writing) return this.write();
    this.scheduleWrite(Math.max(wait, 0));
  }

  /** Stops further writes and returns the value no write has carried yet. */
  async takeUnwritten(): Promise<UnwrittenProgress | undefined> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    return this.unwritten;
  }

  private scheduleWrite(delayMs: number): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.write();
    }, delayMs);
  }

  private async write(): Promise<void> {
    if (this.writing) return this.writing;
    const value = this.unwritten;
    if ((!value && !this.log.waiting) || this.closed) return;
    this.unwritten = undefined;
    this.lastWriteAt = Date.now();
    if (value) this.log.progress(value.progress, value.stage);
    const rows = this.log.take();
    const { job, token } = this.run;
    this.writing = updateRunProgress(
      this.db,
      this.schema,
      job.id,
      token,
      { progress: value?.progress ?? null, stage: value?.stage, rows },
      value ? this.notifyOrigin : undefined,
    )
      .then((landed) => {
        if (landed && !value) return;
        if (landed && value) {
          this.landed = { progress: value.progress, stage: value.stage ?? this.landed?.stage };
          this.events.emit([
            jobEvent('progress', {
              id: job.id,
              jobType: job.jobType,
              status: job.status,
              attempts: job.attempts,
              progress: value.progress,
              currentStage: this.landed.stage ?? job.currentStage,
            }),
          ]);
          return;
        }
        this.superseded.record('progress', job.id, token);
        this.run.abort(new JobCancelledError(job.id));
      })
      .catch((error: unknown) => {
        // Progress is advisory: a failed write must not fail the job. Keep the value and the
        // rows so the next write, or the completion write, still carries them.
        this.unwritten ??= value;
        this.log.putBack(rows);
        this.logger.warn(`Could not record progress: ${databaseErrorText(error)}`);
      })
      .finally(() => {
        this.writing = undefined;
        if ((this.unwritten || this.log.waiting) && !this.closed) {
          this.scheduleWrite(this.throttleMs);
        }
      });
    return this.writing;
  }
}

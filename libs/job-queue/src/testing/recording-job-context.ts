import { Logger } from '@nestjs/common';
import { Job } from '../entities/job.entity';
import { SnoozeJob } from '../errors/snooze-job';
import { JobContext } from '../interfaces/job-context.interface';
import { checkProgress, checkStage } from '../validation/job-input.checks';
import { checkLogData, checkLogMessage } from '../validation/log-line.checks';
import { PerformResult } from './testing.types';

/**
 * The context `JobQueueTester.perform` gives a handler: the worker's checks on what it reports
 * (a bad percent throws as it would in a run), with progress and log lines kept in memory
 * instead of written, since the job of a `perform` has no row.
 */
export class RecordingJobContext<T> implements JobContext<T> {
  readonly progressCalls: PerformResult['progress'] = [];
  readonly logLines: PerformResult['logs'] = [];
  readonly logger: Logger;
  private readonly controller = new AbortController();

  constructor(readonly job: Job<T>) {
    this.logger = new Logger(`JobQueue:${job.jobType}#${job.id}`);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  progress = async (percent: number, stage?: string): Promise<void> => {
    const checked = checkProgress('progress', percent);
    const checkedStage = checkStage('stage', stage);
    this.progressCalls.push(
      checkedStage === undefined ? { percent: checked } : { percent: checked, stage: checkedStage },
    );
  };

  log = (message: string, data?: unknown): void => {
    const text = checkLogMessage(message);
    checkLogData(data);
    this.logLines.push(data === undefined ? { message: text } : { message: text, data });
  };

  snooze = (delayMs: number): SnoozeJob => new SnoozeJob(delayMs);
}

import { Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Job } from '../entities/job.entity';
import { SnoozeJob } from '../errors/snooze-job';
import { JobContext } from '../interfaces/job-context.interface';
import { DependencyResults } from '../interfaces/flow.interface';
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

  /** The transaction a `transaction: true` handler runs in (`perform` opens it). */
  runManager: EntityManager | undefined;

  constructor(
    readonly job: Job<T>,
    private readonly dataSource: DataSource,
  ) {
    this.logger = new Logger(`JobQueue:${job.jobType}#${job.id}`);
  }

  get manager(): EntityManager {
    if (this.runManager) return this.runManager;
    throw new Error(
      'ctx.manager is set only in a handler declared with @JobHandler(type, { transaction: true })',
    );
  }

  /** A transaction of the data source's, committed when `fn` resolves (a `perform` has no row). */
  transaction = <R>(fn: (manager: EntityManager) => Promise<R>): Promise<R> =>
    this.runManager ? fn(this.runManager) : this.dataSource.transaction(fn);

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

  /** What `ctx.dependencyResults()` gives: a `perform`'s job has no row, so no dependencies. */
  dependencyResults = (): Promise<DependencyResults> =>
    Promise.resolve({ all: [], byJobId: {}, byStep: {}, failed: [] });
}

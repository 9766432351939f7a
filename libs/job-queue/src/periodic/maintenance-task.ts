import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { databaseErrorText } from '../errors/database-error.util';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { ScheduledTask } from './scheduled-task';

/** What every maintenance task is given: one injectable, so each names only what is its own. */
@Injectable()
export class MaintenanceContext {
  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) readonly options: ResolvedJobQueueOptions,
    @Inject(JOB_QUEUE_SCHEDULER) readonly schedulerRegistry: SchedulerRegistry,
  ) {}
}

/** How a maintenance task is registered, how often it runs, and how its failures read. */
export interface MaintenanceTaskOptions {
  /** The interval's name in the SchedulerRegistry: `job-queue:<kind>:<workerId>`. */
  kind: string;
  /** The period, from the options (`stagerIntervalMs` …). */
  periodMs: (options: ResolvedJobQueueOptions) => number;
  /** The warning's start when a pass fails, before the database's reason. */
  failure: string;
}

/**
 * One of a worker's periodic maintenance passes (the reaper, stager, cron scheduler, pruner and
 * stats refresher): `runOnce()` every `periodMs` on a `ScheduledTask` (a pass still going is not
 * started twice; `stop()` waits for it), a failed pass logged as a warning once per log period
 * while failures last. Each subclass says what one pass does.
 */
export abstract class MaintenanceTask {
  protected readonly logger = new Logger('JobQueue');
  private readonly task: ScheduledTask;

  protected readonly dataSource: DataSource;
  protected readonly options: ResolvedJobQueueOptions;

  protected constructor(
    { dataSource, options, schedulerRegistry }: MaintenanceContext,
    { kind, periodMs, failure }: MaintenanceTaskOptions,
  ) {
    this.dataSource = dataSource;
    this.options = options;
    this.task = new ScheduledTask(
      schedulerRegistry,
      `job-queue:${kind}:${options.workerId}`,
      periodMs(options),
      () => this.runOnce(),
      (error) => this.logger.warn(`${failure}: ${databaseErrorText(error)}`),
    );
  }

  /** One pass. */
  protected abstract runOnce(): Promise<unknown>;

  start(): void | Promise<void> {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}

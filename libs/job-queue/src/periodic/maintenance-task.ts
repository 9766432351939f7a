import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { databaseErrorText } from '../errors/database-error.util';
import { ScheduledTask } from './scheduled-task';

/** How a maintenance task is registered, how often it runs, and how its failures read. */
export interface MaintenanceTaskOptions {
  /** The interval's name in the SchedulerRegistry: `job-queue:<kind>:<workerId>`. */
  kind: string;
  workerId: string;
  periodMs: number;
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

  protected constructor(
    schedulerRegistry: SchedulerRegistry,
    { kind, workerId, periodMs, failure }: MaintenanceTaskOptions,
  ) {
    this.task = new ScheduledTask(
      schedulerRegistry,
      `job-queue:${kind}:${workerId}`,
      periodMs,
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

import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../job-queue.options';
import { JobCancelledError } from '../errors';
import { heartbeatJobs } from '../sql/heartbeat-jobs.query';
import { JobCompleter } from './job-completer';
import { RunningJobs } from './running-jobs';
import { ScheduledTask } from './scheduled-task';

/**
 * Renews the lease of every job this worker holds, one statement per `heartbeatIntervalMs`, and
 * aborts the handlers of jobs it no longer holds (cancelled, or taken back by the reaper).
 */
@Injectable()
export class JobHeartbeat {
  private readonly logger = new Logger('JobQueue');
  private readonly task: ScheduledTask;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly completer: JobCompleter,
    @Inject(JOB_QUEUE_SCHEDULER) schedulerRegistry: SchedulerRegistry,
  ) {
    this.task = new ScheduledTask(
      schedulerRegistry,
      `job-queue:heartbeat:${options.workerId}`,
      options.heartbeatIntervalMs,
      () => this.beatOnce(),
      (error) => this.logger.warn(`Heartbeat failed: ${error.message}`),
    );
  }

  start(): void {
    this.task.start();
  }

  /** Keeps renewing leases while running jobs drain, whatever the host's scheduler does. */
  detach(): void {
    this.task.detach();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** One renewal; returns how many handlers were aborted because their job is no longer ours. */
  async beatOnce(): Promise<number> {
    const runningIds = this.running.ids();
    const ids = [...runningIds, ...this.completer.pendingIds()];
    if (ids.length === 0) return 0;
    const held = new Set(await heartbeatJobs(this.dataSource, this.options.workerId, ids));
    let aborted = 0;
    for (const id of runningIds) {
      const entry = this.running.get(id);
      if (!held.has(id) && entry && !entry.aborted) {
        entry.abort(new JobCancelledError(id));
        aborted++;
      }
    }
    return aborted;
  }
}

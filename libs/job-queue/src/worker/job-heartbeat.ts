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
import { databaseErrorText } from '../errors/database-error.util';
import { heartbeatJobs } from '../sql/heartbeat-jobs.query';
import { JobCompleter } from './job-completer';
import { runKey } from './running-job';
import { PrefetchedJobs } from './prefetched-jobs';
import { RunningJobs } from './running-jobs';
import { ScheduledTask } from './scheduled-task';

/**
 * Renews the lease of every run this worker holds, one statement per `heartbeatIntervalMs`, and
 * aborts the handlers of runs that no longer hold their job (cancelled, retried, or taken back by
 * the reaper); a prefetched job that no longer holds its job is dropped before it starts.
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
    private readonly prefetched: PrefetchedJobs,
    @Inject(JOB_QUEUE_SCHEDULER) schedulerRegistry: SchedulerRegistry,
  ) {
    this.task = new ScheduledTask(
      schedulerRegistry,
      `job-queue:heartbeat:${options.workerId}`,
      options.heartbeatIntervalMs,
      () => this.beatOnce(),
      (error) => this.logger.warn(`Heartbeat failed: ${databaseErrorText(error)}`),
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

  /**
   * One renewal, of every run by job id and fencing token; returns how many handlers were
   * aborted because their run no longer holds its job (cancelled, retried or taken back: the
   * fallback for a cancel whose NOTIFY this worker did not get, e.g. with LISTEN off).
   */
  async beatOnce(): Promise<number> {
    const entries = this.running.all();
    const prefetched = this.prefetched.runs();
    const runs = [...this.running.runs(), ...this.completer.pendingRuns(), ...prefetched];
    if (runs.length === 0) return 0;
    const held = new Set(
      await heartbeatJobs(this.dataSource, this.options.schema, this.options.workerId, runs),
    );
    // A prefetched job whose lease is gone (cancelled, taken back) must not start.
    const lost = prefetched.filter((run) => !held.has(runKey(run.id, run.token)));
    for (const id of this.prefetched.dropRuns(lost)) {
      this.logger.debug(
        `Prefetched job ${id} is no longer this worker's: dropped before it started`,
      );
    }
    let aborted = 0;
    for (const entry of entries) {
      // A run that settled meanwhile may have finished its job: only those still going count.
      if (held.has(entry.key) || !this.running.holds(entry)) continue;
      this.running.superseded.record('heartbeat', entry.job.id, entry.token);
      if (!entry.aborted) {
        entry.abort(new JobCancelledError(entry.job.id));
        aborted++;
      }
    }
    return aborted;
  }
}

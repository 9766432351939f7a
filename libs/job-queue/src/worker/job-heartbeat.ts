import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobCancelledError } from '../errors';
import { databaseErrorText } from '../errors/database-error.util';
import { heartbeatJobs } from '../sql/heartbeat-jobs.query';
import { DedicatedConnection } from '../sql/dedicated-connection';
import { JobCompleter } from './job-completer';
import { JobPoller } from './job-poller';
import { LogPeriod } from '../periodic/log-period';
import { runKey } from './running-job';
import { PrefetchedJobs } from './prefetched-jobs';
import { RunningJobs } from './running-jobs';
import { ScheduledTask } from '../periodic/scheduled-task';

/**
 * Renews the lease of every run this worker holds, one statement per `heartbeatIntervalMs`, and
 * aborts the handlers of runs that no longer hold their job (cancelled, retried, or taken back by
 * the reaper); a prefetched job that no longer holds its job is dropped before it starts, and
 * one whose type was paused is handed back (how a worker with LISTEN off learns of a pause).
 *
 * It sends on a connection of its own, outside the app's pool: handlers that hold pooled
 * connections must never make the lease wait for one (a starved pool would let every job's
 * lease lapse while its handler works, and the reaper would run it again elsewhere).
 */
@Injectable()
export class JobHeartbeat {
  private readonly logger = new Logger('JobQueue');
  private readonly task: ScheduledTask;
  private readonly connection: DedicatedConnection;
  private readonly lateLog = new LogPeriod();
  /**
   * When the previous beat began (`performance.now()`), whether it had runs to renew or not, or
   * when the heartbeat started.
   */
  private lastBeatAt: number | undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly completer: JobCompleter,
    private readonly prefetched: PrefetchedJobs,
    private readonly poller: JobPoller,
    @Inject(JOB_QUEUE_SCHEDULER) schedulerRegistry: SchedulerRegistry,
  ) {
    this.connection = new DedicatedConnection(dataSource, `heartbeat ${options.workerId}`);
    this.task = new ScheduledTask(
      schedulerRegistry,
      `job-queue:heartbeat:${options.workerId}`,
      options.heartbeatIntervalMs,
      () => this.beatOnce(),
      (error) => this.logger.warn(`Heartbeat failed: ${databaseErrorText(error)}`),
    );
  }

  start(): void {
    this.lastBeatAt = performance.now(); // the first beat is due an interval from now
    this.task.start();
  }

  /** Keeps renewing leases while running jobs drain, whatever the host's scheduler does. */
  detach(): void {
    this.task.detach();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    await this.connection.close();
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
    const sentAt = performance.now();
    const previousBeatAt = this.lastBeatAt;
    this.lastBeatAt = sentAt;
    if (runs.length === 0) return 0;
    const answer = await heartbeatJobs(
      this.connection,
      this.options.schema,
      this.options.workerId,
      runs,
    );
    this.warnIfLate(previousBeatAt);
    const { held } = answer;
    this.prefetched.renewed(held, sentAt);
    // A prefetched job whose lease is gone (cancelled, taken back) must not start.
    const lost = prefetched.filter((run) => !held.has(runKey(run.id, run.token)));
    for (const id of this.prefetched.dropRuns(lost)) {
      this.logger.debug(
        `Prefetched job ${id} is no longer this worker's: dropped before it started`,
      );
    }
    for (const jobType of this.prefetched.typesOf(answer.paused)) {
      void this.poller.dropPaused(jobType);
    }
    let aborted = 0;
    for (const entry of entries) {
      // A run that settled meanwhile may have finished its job: only those still going count.
      if (held.has(entry.key) || entry.finished || !this.running.holds(entry)) continue;
      this.running.superseded.record('heartbeat', entry.job.id, entry.token);
      if (!entry.aborted) {
        entry.abort(new JobCancelledError(entry.job.id));
        aborted++;
      }
    }
    return aborted;
  }

  /**
   * Warns (once per log period) when this renewal reached the database more than a whole
   * interval later than due, i.e. two intervals or more after the previous beat began: the event
   * loop was blocked, or the database or the network slow. Past `staleAfterMs` the reaper takes
   * the jobs back.
   */
  private warnIfLate(previousBeatAt: number | undefined): void {
    if (previousBeatAt === undefined) return;
    const interval = this.options.heartbeatIntervalMs;
    const gapMs = Math.round(performance.now() - previousBeatAt);
    if (gapMs < 2 * interval || !this.lateLog.due()) return;
    this.logger.warn(
      `Heartbeat ${gapMs - interval} ms late: leases renewed ${gapMs} ms after the previous ` +
        `beat (heartbeatIntervalMs ${interval}, staleAfterMs ${this.options.staleAfterMs}); ` +
        'the event loop was blocked or the database slow, and past staleAfterMs the jobs held ' +
        'here are taken back and may run elsewhere',
    );
  }
}

import { Injectable } from '@nestjs/common';
import { Queryable } from '../sql/queryable';
import { RescuedJobRow, rescueStaleJobs } from '../sql/rescue-stale-jobs.query';
import { ReleasedStuckJobs, releaseStuckJobs } from '../sql/release-stuck-jobs.query';
import { MaintenanceContext, MaintenanceTask } from '../periodic/maintenance-task';
import { retryPolicyFor } from '../retry/retry-policy';
import { JobEventStream } from '../events/job-event-stream';
import { jobEvent } from '../events/job-event-payload';
import { JobQueueInstruments } from '../instrumentation/job-queue-instruments';

/**
 * Recovers jobs whose worker stopped heartbeating (crashed, killed, cut off) for
 * `staleAfterMs`: back to `scheduled` (then `pending`) after their backoff, or `failed` when
 * that was their last attempt, so no job stays claimed forever. The limit and backoff are each
 * job's row's, not this node's handlers' (it may have none of them): every node reaps alike.
 * In the same pass, jobs `waiting` past `stuckAfterMs` with nothing to release them go back to
 * `pending` (see `releaseStuckJobs`). Every worker runs one; advisory locks let one act at a time.
 */
@Injectable()
export class StaleJobReaper extends MaintenanceTask {
  constructor(
    context: MaintenanceContext,
    private readonly events: JobEventStream,
    private readonly instruments: JobQueueInstruments,
  ) {
    super(context, {
      kind: 'reaper',
      periodMs: (options) => options.reaperIntervalMs,
      failure: 'Stale-job check failed',
    });
  }

  protected async runOnce(): Promise<unknown> {
    await this.rescueOnce();
    return this.releaseStuckOnce();
  }

  /**
   * Moves the jobs waiting past `stuckAfterMs` for a key nothing will release back to `pending`,
   * and warns once per type with how many and the oldest id. The queue's own releases leave one
   * only when the type's handler is gone from every node (a key's last holder, handed back or
   * rescued, releases one waiting job, and no node runs that one to free the next); otherwise
   * each line is worth a look. Nothing with `stuckAfterMs: false`.
   */
  async releaseStuckOnce(
    now: Date | null = null,
    db: Queryable = this.dataSource,
  ): Promise<ReleasedStuckJobs[]> {
    if (this.options.stuckAfterMs === false) return [];
    const released = await releaseStuckJobs(
      db,
      this.options.schema,
      this.options.stuckAfterMs,
      now,
    );
    for (const { jobType, moved, oldestId } of released) {
      this.logger.warn(
        `Job type ${jobType}: ${moved} job(s) waited over ${this.options.stuckAfterMs} ms ` +
          `(stuckAfterMs) for a key with no running job and no rate window to release them, ` +
          `moved back to pending (oldest: job ${oldestId})`,
      );
    }
    return released;
  }

  /**
   * One pass, at the queue's time `now` (null: the database's) through `db`: the testing kit
   * passes its clock's time and a test's transaction. Returns the jobs it recovered (none when
   * another node holds the lock).
   */
  async rescueOnce(
    now: Date | null = null,
    db: Queryable = this.dataSource,
  ): Promise<RescuedJobRow[]> {
    // Only for a row that has no policy of its own (claimed by hand): the module's defaults.
    const { maxAttempts, backoff } = retryPolicyFor(undefined, this.options);
    const rescued = await rescueStaleJobs(
      db,
      this.options.schema,
      this.options.staleAfterMs,
      { maxAttempts, ...backoff },
      this.options.events.remote ? this.options.workerId : undefined,
      now,
    );
    this.events.emit(
      rescued.map((job) =>
        jobEvent('rescued', {
          id: job.id,
          jobType: job.job_type,
          status: job.status,
          attempts: job.attempts,
          progress: job.progress,
          currentStage: job.current_stage,
        }),
      ),
    );
    this.instruments.rescued(rescued.map((job) => ({ jobType: job.job_type, status: job.status })));
    for (const job of rescued) {
      this.logger.warn(
        `Recovered stale job ${job.id} (${job.job_type}) from worker ${job.worker_id ?? '?'}: ` +
          (job.status === 'failed'
            ? 'no attempts left, now failed'
            : `back to ${job.status}, to run again from ${job.run_at.toISOString()}`),
      );
    }
    return rescued;
  }
}

import { Injectable } from '@nestjs/common';
import { STAGE_BATCH_SIZE, stageScheduledJobs } from '../sql/stage-scheduled-jobs.query';
import { MaintenanceContext, MaintenanceTask } from '../periodic/maintenance-task';
import { ClaimWakeup } from '../periodic/claim-wakeup';

/** Statements one pass runs at most: a huge backlog that fell due is staged over several passes. */
const MAX_STATEMENTS_PER_PASS = 10;

/**
 * Moves `scheduled` jobs (due later: delays, retry and rescue backoff) to `pending` once their
 * `run_at` has come, every `stagerIntervalMs`, in statements of at most `STAGE_BATCH_SIZE` jobs.
 * The claim then reads only claimable rows: jobs due later never sit in its index. Every worker
 * runs one (`SKIP LOCKED` keeps them apart). When a pass moves jobs, it wakes this node's poller (`ClaimWakeup`),
 * and its statement notifies the insert channel so idle workers elsewhere claim them too.
 */
@Injectable()
export class ScheduledJobStager extends MaintenanceTask {
  constructor(
    context: MaintenanceContext,
    private readonly wakeup: ClaimWakeup,
  ) {
    super(context, {
      kind: 'stager',
      periodMs: (options) => options.stagerIntervalMs,
      failure: 'Staging scheduled jobs failed',
    });
  }

  protected runOnce(): Promise<unknown> {
    return this.stageOnce();
  }

  /**
   * One pass: moves the jobs due by `now` (default: the database's now()) to `pending`, a batch
   * per statement until a batch comes back short; returns how many it moved.
   */
  async stageOnce(now: Date | null = null): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_STATEMENTS_PER_PASS; i++) {
      const moved = await stageScheduledJobs(this.dataSource, this.options.schema, now);
      total += moved;
      if (moved > 0) this.wakeup.jobsClaimable();
      if (moved < STAGE_BATCH_SIZE) break;
    }
    return total;
  }
}

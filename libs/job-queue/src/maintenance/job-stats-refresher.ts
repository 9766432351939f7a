import { Injectable } from '@nestjs/common';
import { JobStatsCountRow, refreshJobStats } from '../sql/refresh-job-stats.query';
import { MaintenanceContext, MaintenanceTask } from '../periodic/maintenance-task';

/**
 * Keeps the snapshot that `stats()` reads fresh: every `statsIntervalMs` it asks the database to
 * count jobs by type and status if the snapshot is due, that is older than `statsIntervalMs` and
 * than ten times the last count's duration (a count reads the whole table: on a big one, it runs
 * at most a tenth of the time). Every worker runs one; the check is one statement, and a
 * transaction-scoped advisory lock (`lockKey('stats')`) lets one node count at a time. Whichever
 * node counted, the snapshot is shared, so a fleet counts about once per wait, not once per node.
 */
@Injectable()
export class JobStatsRefresher extends MaintenanceTask {
  constructor(context: MaintenanceContext) {
    super(context, {
      kind: 'stats',
      periodMs: (options) => options.statsIntervalMs,
      failure: 'Refreshing job stats failed',
    });
  }

  protected runOnce(): Promise<unknown> {
    return this.refreshOnce();
  }

  /**
   * One check: counts and stores the snapshot when it is due and no other node is counting;
   * returns the counts, or undefined when it did not count.
   */
  refreshOnce(): Promise<JobStatsCountRow | undefined> {
    return refreshJobStats(
      this.dataSource,
      this.options.schema,
      this.options.statsIntervalMs,
      false,
    );
  }
}

import { Logger } from '@nestjs/common';
import { LogPeriod } from '../periodic/log-period';
import { Queryable } from '../sql/queryable';
import { JobStatsSnapshotRow, readJobStats } from '../sql/read-job-stats.query';

/** Longest a scrape waits for the snapshot: past it, the job gauges are left empty. */
export const SNAPSHOT_READ_TIMEOUT_MS = 2_000;

/**
 * A read still unanswered this long is given up, and the next scrape sends a new one: a
 * connection cut without a reset can leave a query unanswered for many minutes.
 */
export const SNAPSHOT_READ_ABANDON_MS = 30_000;

/**
 * The stats snapshot as a scrape reads it: the one `job_stats` row (by primary key), never a
 * count of `jobs`. `QueueService.stats()` is not used: it counts the table itself when the
 * snapshot is older than it accepts, and a scrape must cost the same on any table.
 *
 * Scrapes that arrive while a read is under way share it, so a database that does not answer
 * holds one of the app's connections, not one per scrape (a new read is sent only once the
 * pending one is `SNAPSHOT_READ_ABANDON_MS` old). Each caller waits at most `timeoutMs`; a
 * failed, timed-out or absent read is `undefined`, logged a few lines per outage.
 */
export class JobStatsSnapshot {
  private readonly logger = new Logger('JobQueueMetrics');
  private readonly failures = new LogPeriod();
  private pending: { read: Promise<JobStatsSnapshotRow | undefined>; sentAt: number } | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly schema: string,
    private readonly timeoutMs = SNAPSHOT_READ_TIMEOUT_MS,
  ) {}

  /** The snapshot now, or `undefined` when there is none or it could not be read in time. */
  async read(): Promise<JobStatsSnapshotRow | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      const row = await Promise.race([this.shared(), timedOut]);
      this.failures.reset();
      return row;
    } catch (error) {
      if (this.failures.due()) {
        this.logger.warn(
          `Reading the job stats snapshot failed (${(error as Error)?.message ?? String(error)}): ` +
            'the job gauges are left empty',
        );
      }
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private shared(): Promise<JobStatsSnapshotRow | undefined> {
    const now = Date.now();
    if (this.pending && now - this.pending.sentAt < SNAPSHOT_READ_ABANDON_MS) {
      return this.pending.read;
    }
    const pending = {
      read: readJobStats(this.db, this.schema).finally(() => {
        if (this.pending === pending) this.pending = undefined;
      }),
      sentAt: now,
    };
    this.pending = pending;
    return pending.read;
  }
}

import { performance } from 'node:perf_hooks';
import { Queryable } from '../sql/queryable';
import { readJobStats } from '../sql/read-job-stats.query';
import { JobCountsByType, refreshJobStats } from '../sql/refresh-job-stats.query';
import { pausedJobTypes } from '../sql/paused-job-types.query';

/**
 * Without `maxAgeMs`, a snapshot is fresh for this many of the refresher's waits
 * (max(`statsIntervalMs`, 10 × its count's duration)): while any worker node runs its refresher,
 * the snapshot never gets older than that, so `stats()` never has to count by itself.
 */
export const STATS_MAX_AGE_REFRESHES = 3;

interface Snapshot {
  counts: JobCountsByType;
  countMs: number;
  /** When its count's snapshot was taken, on this process's `performance.now()` clock. */
  takenAt: number;
}

/**
 * Where `stats()` gets its counts: the stored snapshot when it is fresh enough (one row read by
 * primary key), otherwise a count of its own, stored as the new snapshot. One statement of each
 * kind at a time per process (single flight): 400 callers at once cost one read, or one count.
 *
 * A count is sent on the next turn of the event loop, and every caller until then shares it; a
 * caller that arrives while a count is on its way shares it too, unless it asked for a snapshot
 * younger than that count (`maxAgeMs: 0`): such callers share the next count instead. So an
 * exact `stats()` after a write always counts after that write.
 */
export class JobStatsReader {
  private reading: Promise<Snapshot | undefined> | undefined;
  private readingPaused: Promise<string[]> | undefined;
  private queued: Promise<Snapshot> | undefined;
  private running: { result: Promise<Snapshot>; sentAt: number } | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly schema: string,
    private readonly intervalMs: number,
  ) {}

  /** Counts at most `maxAgeMs` old; undefined: fresh by `STATS_MAX_AGE_REFRESHES`. */
  async counts(maxAgeMs: number | undefined): Promise<JobCountsByType> {
    if (maxAgeMs !== 0) {
      const stored = await this.readShared();
      if (stored && this.isFresh(stored, maxAgeMs)) return stored.counts;
    }
    const running = this.running;
    if (running && performance.now() - running.sentAt <= (maxAgeMs ?? Infinity)) {
      return (await running.result).counts;
    }
    return (await this.countShared()).counts;
  }

  /**
   * The types paused now: read at every call (pauses must show at once; the table is small),
   * one read shared by the callers that arrive while it is under way.
   */
  pausedTypes(): Promise<string[]> {
    this.readingPaused ??= pausedJobTypes(this.db, this.schema).finally(
      () => (this.readingPaused = undefined),
    );
    return this.readingPaused;
  }

  private isFresh(snapshot: Snapshot, maxAgeMs: number | undefined): boolean {
    const limit =
      maxAgeMs ?? STATS_MAX_AGE_REFRESHES * Math.max(this.intervalMs, 10 * snapshot.countMs);
    return performance.now() - snapshot.takenAt <= limit;
  }

  private readShared(): Promise<Snapshot | undefined> {
    this.reading ??= readJobStats(this.db, this.schema)
      .then((row) =>
        row
          ? { counts: row.counts, countMs: row.count_ms, takenAt: performance.now() - row.age_ms }
          : undefined,
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  private countShared(): Promise<Snapshot> {
    this.queued ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.queued = undefined;
      const sentAt = performance.now();
      // Forced, the statement always returns its counts.
      const result = refreshJobStats(this.db, this.schema, this.intervalMs, true).then(
        (row): Snapshot => ({ counts: row!.counts, countMs: row!.count_ms, takenAt: sentAt }),
      );
      const entry = { result, sentAt };
      this.running = entry;
      result
        .finally(() => {
          if (this.running === entry) this.running = undefined;
        })
        .catch(() => undefined); // the callers get the error
      return result;
    });
    return this.queued;
  }
}

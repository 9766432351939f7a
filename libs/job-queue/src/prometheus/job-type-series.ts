import type { Counter, Histogram } from 'prom-client';
import { JobRunEnd } from '../instrumentation/job-queue-instrument.interface';
import { CountedSinceRead } from './counted-since-read';
import { JobMetrics } from './job-metrics';

/**
 * One job type's label children, looked up once per type: counting a run is then a read of a
 * field and an `inc` or `observe`, with no label object built per job. The counts every run
 * makes (started, and how it ended) reach their counters when prom-client reads them.
 */
export class JobTypeSeries {
  readonly enqueued: Counter.Internal;
  readonly started: CountedSinceRead;
  readonly rescued: Counter.Internal;
  readonly cancelled: Counter.Internal;
  readonly failed: Counter.Internal;
  readonly waitSeconds: Histogram.Internal<'type'>;
  /** The count of each run end that has one (`cancelled` and `interrupted` count no outcome). */
  private readonly ends: Partial<Record<JobRunEnd, CountedSinceRead>>;
  private readonly runSeconds = new Map<JobRunEnd, Histogram.Internal<'type' | 'outcome'>>();

  constructor(
    private readonly metrics: JobMetrics,
    private readonly type: string,
  ) {
    const labels = { type };
    this.enqueued = metrics.enqueued.labels(labels);
    this.rescued = metrics.rescued.labels(labels);
    this.cancelled = metrics.cancelled.labels(labels);
    this.failed = metrics.failed.labels(labels);
    this.waitSeconds = metrics.waitSeconds.labels(labels);
    const started = metrics.started.labels(labels);
    const completed = metrics.completed.labels(labels);
    const retried = metrics.retried.labels(labels);
    const snoozed = metrics.snoozed.labels(labels);
    this.started = new CountedSinceRead(started);
    this.ends = {
      completed: new CountedSinceRead(completed),
      failed: new CountedSinceRead(this.failed),
      retried: new CountedSinceRead(retried),
      snoozed: new CountedSinceRead(snoozed),
    };
    // Every counter of the type is exported from the type's first sighting, at 0: `rate()` and
    // `increase()` see a series' first increment only if the series existed before it.
    for (const counter of [
      this.enqueued,
      this.rescued,
      this.cancelled,
      this.failed,
      started,
      completed,
      retried,
      snoozed,
    ]) {
      counter.inc(0);
    }
  }

  /** Adds the runs counted since the last read to their counters. */
  flush(): void {
    this.started.flush();
    for (const count of Object.values(this.ends)) count.flush();
  }

  /** A run of this type ended: its time by outcome, and its outcome's counter. */
  runEnded(end: JobRunEnd, runMs: number): void {
    let runSeconds = this.runSeconds.get(end);
    if (!runSeconds) {
      runSeconds = this.metrics.runSeconds.labels({ type: this.type, outcome: end });
      this.runSeconds.set(end, runSeconds);
    }
    runSeconds.observe(runMs / 1000);
    this.ends[end]?.inc();
  }
}

import type { Counter, Histogram } from 'prom-client';
import { JobRunEnd } from '../instrumentation/job-queue-instrument.interface';
import { JobMetrics } from './job-metrics';

/**
 * One job type's label children, looked up once per type: counting a run is then a read of a
 * field and an `inc` or `observe`, with no label object built per job.
 */
export class JobTypeSeries {
  readonly enqueued: Counter.Internal;
  readonly started: Counter.Internal;
  readonly rescued: Counter.Internal;
  readonly cancelled: Counter.Internal;
  readonly failed: Counter.Internal;
  readonly waitSeconds: Histogram.Internal<'type'>;
  /** The counter of each run end that has one (`cancelled` and `interrupted` count no outcome). */
  private readonly ends: Partial<Record<JobRunEnd, Counter.Internal>>;
  private readonly runSeconds = new Map<JobRunEnd, Histogram.Internal<'type' | 'outcome'>>();

  constructor(
    private readonly metrics: JobMetrics,
    private readonly type: string,
  ) {
    const labels = { type };
    this.enqueued = metrics.enqueued.labels(labels);
    this.started = metrics.started.labels(labels);
    this.rescued = metrics.rescued.labels(labels);
    this.cancelled = metrics.cancelled.labels(labels);
    this.failed = metrics.failed.labels(labels);
    this.waitSeconds = metrics.waitSeconds.labels(labels);
    this.ends = {
      completed: metrics.completed.labels(labels),
      failed: this.failed,
      retried: metrics.retried.labels(labels),
      snoozed: metrics.snoozed.labels(labels),
    };
    // Every counter of the type is exported from the type's first sighting, at 0: `rate()` and
    // `increase()` see a series' first increment only if the series existed before it.
    for (const counter of [
      this.enqueued,
      this.started,
      this.rescued,
      this.cancelled,
      ...Object.values(this.ends),
    ]) {
      counter.inc(0);
    }
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

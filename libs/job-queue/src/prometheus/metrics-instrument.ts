import { Job } from '../entities/job.entity';
import {
  JobEnqueueScope,
  JobQueueInstrument,
  JobRunScope,
} from '../instrumentation/job-queue-instrument.interface';
import { JobMetrics } from './job-metrics';
import { JobTypeSeries } from './job-type-series';

/** The metrics' instrument, and what the counters call before prom-client reads them. */
export interface MetricsInstrument extends JobQueueInstrument {
  /** Adds the runs counted since the last read to the counters (see `CountedSinceRead`). */
  flush(): void;
}

/**
 * The instrument that feeds the counters and histograms: what this process enqueued, ran,
 * rescued and cancelled, by job type. Other processes count their own; Prometheus sums them.
 * Per job it does a map read, two counts and two `observe` calls, and nothing else: no I/O, no
 * timer, no label object (see `JobTypeSeries`).
 */
export function metricsInstrument(metrics: JobMetrics): MetricsInstrument {
  const byType = new Map<string, JobTypeSeries>();
  const seriesOf = (type: string): JobTypeSeries => {
    let series = byType.get(type);
    if (!series) {
      series = new JobTypeSeries(metrics, type);
      byType.set(type, series);
    }
    return series;
  };

  // One scope for every enqueue: it captures nothing, and counts only the jobs created (a
  // skipped duplicate is not a new job). An enqueue inside a transaction counts at its insert,
  // even if the transaction later rolls back.
  const enqueueScope: JobEnqueueScope = {
    ended({ created }) {
      if (!created) return;
      // A batch is mostly runs of one type: one `inc` per run, not per job.
      let type: string | undefined;
      let count = 0;
      for (const job of created) {
        if (job.jobType !== type) {
          if (type !== undefined) seriesOf(type).enqueued.inc(count);
          type = job.jobType;
          count = 0;
        }
        count++;
      }
      if (type !== undefined) seriesOf(type).enqueued.inc(count);
    },
  };

  return {
    flush() {
      for (const series of byType.values()) series.flush();
    },

    enqueueStarted: () => enqueueScope,

    runStarted(job: Job): JobRunScope {
      const series = seriesOf(job.jobType);
      series.started.inc();
      // Due → start, by this process's clock against the database's `run_at`: a skew between
      // them could make it negative, so it is floored at 0.
      const dueAt = Number(job.runAt);
      if (Number.isFinite(dueAt))
        series.waitSeconds.observe(Math.max(0, Date.now() - dueAt) / 1000);
      return { ended: ({ end, runMs }) => series.runEnded(end, runMs) };
    },

    rescued(jobs) {
      for (const { jobType, status } of jobs) {
        const series = seriesOf(jobType);
        series.rescued.inc();
        // Out of attempts: the reaper failed it for good, with no run of its own to say so.
        if (status === 'failed') series.failed.inc();
      }
    },

    cancelled(jobType) {
      seriesOf(jobType).cancelled.inc();
    },
  };
}

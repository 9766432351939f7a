import { Counter, Histogram } from 'prom-client';

/** `job_run_seconds`: a handler's run, from 5 ms (a quick write) to 10 minutes (a report). */
export const RUN_SECONDS_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

/**
 * `job_wait_seconds`: from a job's due time to its start, from 10 ms (an idle worker woken by
 * NOTIFY) to an hour (a backlog); a polling worker's wait sits near `pollIntervalMs`.
 */
export const WAIT_SECONDS_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600,
];

/** What this process's instrument counts and observes, labelled by job type (and outcome). */
export interface JobMetrics {
  enqueued: Counter<'type'>;
  started: Counter<'type'>;
  completed: Counter<'type'>;
  failed: Counter<'type'>;
  retried: Counter<'type'>;
  snoozed: Counter<'type'>;
  rescued: Counter<'type'>;
  cancelled: Counter<'type'>;
  runSeconds: Histogram<'type' | 'outcome'>;
  waitSeconds: Histogram<'type'>;
}

/**
 * The metrics, registered nowhere yet (see `registerMetrics`). `beforeRead` runs whenever
 * prom-client reads a counter (a scrape, `get()`): it adds the runs counted since the last read.
 */
export function createJobMetrics(prefix: string, beforeRead: () => void): JobMetrics {
  const counter = (name: string, help: string): Counter<'type'> =>
    new Counter({
      name: `${prefix}${name}`,
      help,
      labelNames: ['type'],
      registers: [],
      collect: beforeRead,
    });
  return {
    enqueued: counter('jobs_enqueued_total', 'Jobs this process enqueued (created, not skipped).'),
    started: counter('jobs_started_total', 'Runs this process started.'),
    completed: counter('jobs_completed_total', 'Runs of this process that completed their job.'),
    failed: counter('jobs_failed_total', 'Runs of this process that failed their job for good.'),
    retried: counter('jobs_retried_total', 'Runs of this process that failed and left a retry.'),
    snoozed: counter('jobs_snoozed_total', 'Runs of this process that snoozed their job.'),
    rescued: counter('jobs_rescued_total', "Stale jobs this process's reaper took back."),
    cancelled: counter(
      'jobs_cancelled_total',
      'Jobs this process cancelled (QueueService.cancel).',
    ),
    runSeconds: new Histogram({
      name: `${prefix}job_run_seconds`,
      help: "A handler's run time in this process, by how the run ended.",
      labelNames: ['type', 'outcome'],
      buckets: [...RUN_SECONDS_BUCKETS],
      registers: [],
    }),
    waitSeconds: new Histogram({
      name: `${prefix}job_wait_seconds`,
      help: "From a job's due time (run_at) to its start in this process.",
      labelNames: ['type'],
      buckets: [...WAIT_SECONDS_BUCKETS],
      registers: [],
    }),
  };
}

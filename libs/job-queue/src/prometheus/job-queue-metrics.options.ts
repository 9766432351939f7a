import type { Registry, RegistryContentType } from 'prom-client';

/** Options of `JobQueueMetricsModule.forRoot`. @publicApi */
export interface JobQueueMetricsOptions {
  /** Where the metrics are registered. Default: prom-client's default `register`. */
  registry?: Registry<RegistryContentType>;
  /** Put before every metric's name. Default: `job_queue_` (see `DEFAULT_METRICS_PREFIX`). */
  prefix?: string;
}

/** The default `prefix`: `job_queue_jobs_enqueued_total` and so on. @publicApi */
export const DEFAULT_METRICS_PREFIX = 'job_queue_';

/** What a metric name may start with (Prometheus' name syntax; empty is allowed). */
const PREFIX_PATTERN = /^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/;

/**
 * The prefix to use, checked when the module is defined: a bad one fails the boot with its value
 * named, not with prom-client's `Invalid metric name` at the first metric.
 */
export function metricsPrefix(options: JobQueueMetricsOptions): string {
  const prefix = options.prefix ?? DEFAULT_METRICS_PREFIX;
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `JobQueueMetricsModule: prefix ${JSON.stringify(prefix)} cannot start a Prometheus metric ` +
        `name: use letters, digits, "_" and ":", not starting with a digit (default: ` +
        `"${DEFAULT_METRICS_PREFIX}")`,
    );
  }
  return prefix;
}

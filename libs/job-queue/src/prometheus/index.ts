// `nest-pg-job-queue/prometheus`: the queue's metrics through prom-client (an optional peer).
// The peer check comes first: without the package, one clear error.
import './peer-check';

export { JobQueueMetricsModule } from './job-queue-metrics.module';
export type { JobQueueMetricsOptions } from './job-queue-metrics.options';
export { DEFAULT_METRICS_PREFIX } from './job-queue-metrics.options';
export { RUN_SECONDS_BUCKETS, WAIT_SECONDS_BUCKETS } from './job-metrics';

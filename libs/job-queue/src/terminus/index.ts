// `nest-pg-job-queue/terminus`: a health indicator for @nestjs/terminus (an optional peer). The
// peer check comes first: without the package, one clear error.
import './peer-check';

export { JobQueueHealthIndicator } from './job-queue-health.indicator';
export type { JobQueueHealthOptions } from './job-queue-health.options';

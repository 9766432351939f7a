// `nest-pg-job-queue/opentelemetry`: spans of every enqueue and run, through @opentelemetry/api
// (an optional peer). The peer check comes first: without the package, one clear error.
import './peer-check';

export { JobQueueTracingModule } from './job-queue-tracing.module';
export type { JobQueueTracingOptions } from './job-queue-tracing.module';
export { JOB_ATTRIBUTES as JOB_SPAN_ATTRIBUTES, MESSAGING_SYSTEM } from './messaging-attributes';

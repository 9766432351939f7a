/**
 * The attribute names of OpenTelemetry's messaging semantic conventions that the spans use,
 * written out so that the entry point needs `@opentelemetry/api` only (the conventions package
 * would be one more dependency for a few strings).
 */
export const MESSAGING = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destinationName: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  batchMessageCount: 'messaging.batch.message_count',
} as const;

/** `messaging.system`: no registered value names this queue, so it names itself. */
export const MESSAGING_SYSTEM = 'nest_pg_job_queue';

/** Attributes of this queue's own, under its namespace. */
export const JOB_ATTRIBUTES = {
  attempt: 'nest_pg_job_queue.job.attempt',
  priority: 'nest_pg_job_queue.job.priority',
  outcome: 'nest_pg_job_queue.job.outcome',
} as const;

/** Where the trace context travels in a job's `meta`: W3C `traceparent` / `tracestate`. */
export const META_KEY = 'otel';

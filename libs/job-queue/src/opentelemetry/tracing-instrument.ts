import {
  context,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
  Tracer,
} from '@opentelemetry/api';
import { Job } from '../entities/job.entity';
import {
  JobEnqueueScope,
  JobQueueInstrument,
  JobRunEnded,
  JobRunScope,
} from '../instrumentation/job-queue-instrument.interface';
import { JOB_ATTRIBUTES, MESSAGING, MESSAGING_SYSTEM, META_KEY } from './messaging-attributes';

/** The W3C trace context as it travels in `meta`. */
type Carrier = Record<string, string>;

function carrierOf(meta: Record<string, unknown> | null): Carrier | undefined {
  const carrier = meta?.[META_KEY];
  return carrier !== null && typeof carrier === 'object' ? (carrier as Carrier) : undefined;
}

/** `send report`, or `send` for a batch of several types (the conventions' `{operation} {destination}`). */
function sendSpanName(jobTypes: readonly string[]): string {
  const first = jobTypes[0];
  return jobTypes.every((type) => type === first) ? `send ${first}` : 'send';
}

function recordFailure(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : undefined,
  });
}

/**
 * Spans of the queue through `@opentelemetry/api`, after OpenTelemetry's messaging conventions:
 * a producer span per `enqueue` or `enqueueMany` call, whose context is stored in each job's
 * `meta` (`otel`: what the app's propagator injects, W3C `traceparent` with the SDK's default),
 * and a consumer span per run, a child of that context, so a run continues the trace of the
 * request that enqueued it, in whichever process runs it. With no SDK registered the API's
 * no-op tracer makes every span a no-op.
 */
export function tracingInstrument(tracer: Tracer): JobQueueInstrument {
  return {
    enqueueStarted(jobTypes): JobEnqueueScope {
      const span = tracer.startSpan(sendSpanName(jobTypes), {
        kind: SpanKind.PRODUCER,
        attributes: {
          [MESSAGING.system]: MESSAGING_SYSTEM,
          [MESSAGING.operationType]: 'send',
          [MESSAGING.operationName]: jobTypes.length === 1 ? 'enqueue' : 'enqueueMany',
          ...(new Set(jobTypes).size === 1 ? { [MESSAGING.destinationName]: jobTypes[0] } : {}),
          ...(jobTypes.length > 1 ? { [MESSAGING.batchMessageCount]: jobTypes.length } : {}),
        },
      });
      const carrier: Carrier = {};
      propagation.inject(trace.setSpan(context.active(), span), carrier);
      return {
        meta: Object.keys(carrier).length > 0 ? { [META_KEY]: carrier } : undefined,
        ended(result) {
          if (result.created === undefined) recordFailure(span, result.error);
          else if (result.created.length === 1) {
            span.setAttribute(MESSAGING.messageId, result.created[0].id);
          }
          span.end();
        },
      };
    },

    runStarted(job: Job): JobRunScope {
      const carrier = carrierOf(job.meta);
      const parent = carrier ? propagation.extract(ROOT_CONTEXT, carrier) : context.active();
      const span = tracer.startSpan(
        `process ${job.jobType}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            [MESSAGING.system]: MESSAGING_SYSTEM,
            [MESSAGING.operationType]: 'process',
            [MESSAGING.operationName]: 'run',
            [MESSAGING.destinationName]: job.jobType,
            [MESSAGING.messageId]: job.id,
            [JOB_ATTRIBUTES.attempt]: job.attempts,
            [JOB_ATTRIBUTES.priority]: job.priority,
          },
        },
        parent,
      );
      const active = trace.setSpan(parent, span);
      return {
        wrap: (run) => context.with(active, run),
        ended({ end, error }: JobRunEnded) {
          span.setAttribute(JOB_ATTRIBUTES.outcome, end);
          if (end === 'failed' || end === 'retried') recordFailure(span, error);
          span.end();
        },
      };
    },
  };
}

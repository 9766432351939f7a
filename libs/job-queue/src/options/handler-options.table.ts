import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';

/** One `@JobHandler` option: what it defaults to and, for a count or period, its least value. */
export interface HandlerOptionSpec {
  readonly defaultText: string;
  readonly min?: number;
}

/**
 * Every `@JobHandler` option, declared once: default and bounds (resolved, over the module's
 * options, in discovery/job-handler-options.ts). Typed against the public interface, so an
 * option added there and not here does not compile; the keys are the known ones.
 */
export const HANDLER_OPTIONS = {
  concurrency: { defaultText: 'no own limit (within `worker.concurrency`)', min: 1 },
  concurrencyPerKey: { defaultText: 'no limit per key', min: 1 },
  globalConcurrency: { defaultText: 'no limit across nodes', min: 1 },
  ordered: { defaultText: '`false`' },
  rateLimit: { defaultText: 'no rate limit' },
  maxAttempts: { defaultText: "the module's `defaultMaxAttempts`", min: 1 },
  timeoutMs: { defaultText: 'none', min: 1 },
  backoff: { defaultText: "the module's `backoff`" },
  cron: { defaultText: 'none' },
  timezone: { defaultText: "`'UTC'`" },
  catchUp: { defaultText: "`'once'`" },
  retention: { defaultText: "the module's `retention`" },
  deadLetter: { defaultText: 'none' },
  transaction: { defaultText: '`false`' },
  dto: { defaultText: 'none' },
} as const satisfies { [K in keyof JobHandlerOptions]-?: HandlerOptionSpec };

import { BackoffOptions } from './backoff-options.interface';

/** Options of `@JobHandler(type, options)`; each overrides the module's default. @publicApi */
export interface JobHandlerOptions {
  /** Jobs of this type this process runs at once (within `worker.concurrency`). Default: no own limit. */
  concurrency?: number;
  /** Attempts before a job of this type fails for good; a job's own `maxAttempts` wins. */
  maxAttempts?: number;
  /** A run longer than this is aborted (`ctx.signal`) and counts as a failed attempt. Default: none. */
  timeoutMs?: number;
  /** Retry delays for this type. Default: the module's `backoff`. */
  backoff?: BackoffOptions;
}

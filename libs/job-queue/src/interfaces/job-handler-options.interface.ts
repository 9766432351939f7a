import { BackoffOptions } from './backoff-options.interface';
import { RetentionOptions } from './retention-options.interface';

/** Options of `@JobHandler(type, options)`; each overrides the module's default. @publicApi */
export interface JobHandlerOptions {
  /**
   * Jobs of this type this process runs at once (within `worker.concurrency`). Default: no own
   * limit. A type at its limit is skipped by the claim; it never runs ahead of other types'
   * higher-priority jobs.
   */
  concurrency?: number;
  /**
   * Attempts before a job of this type fails for good; a job's own `maxAttempts` wins. Written
   * into the job's row by its first claim, with `backoff`: every node then applies the row's.
   */
  maxAttempts?: number;
  /** A run longer than this is aborted (`ctx.signal`) and counts as a failed attempt. Default: none. */
  timeoutMs?: number;
  /**
   * Retry delays for this type, for failed attempts and for attempts the reaper takes back.
   * Default: the module's `backoff`.
   */
  backoff?: BackoffOptions;
  /**
   * How long finished jobs of this type are kept, merged over the module's `retention` (`false`:
   * keep them all). Stored in the database when the worker starts, so every node prunes this
   * type alike, a node without this handler included.
   */
  retention?: false | RetentionOptions;
}

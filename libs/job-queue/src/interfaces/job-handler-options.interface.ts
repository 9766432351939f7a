import type { Type } from '@nestjs/common';
import { BackoffOptions } from './backoff-options.interface';
import { CatchUp } from './schedule-options.interface';
import { RateLimitOptions } from './rate-limit-options.interface';
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
   * Jobs of this type and one `concurrencyKey` (given at enqueue) that run at once, across every
   * node; a job claimed and held in a worker (prefetched) counts as running. Jobs without a key
   * are not limited by it. Enforced by the claim, from the value the last worker to start stored
   * for the type. Default: no limit per key.
   */
  concurrencyPerKey?: number;
  /**
   * Jobs of this type that run at once across every node (`concurrency` stays this process's
   * own), enforced by the claim like `concurrencyPerKey`. Default: no limit across nodes.
   */
  globalConcurrency?: number;
  /**
   * A key's jobs start one at a time, in the claim's order (priority, then enqueue order); only
   * with `concurrencyPerKey: 1`. A job waiting for its retry holds its key's later jobs back until
   * it completes or fails for good; one that fails for good or is cancelled lets the next start.
   * Default: `false`.
   */
  ordered?: boolean;
  /**
   * At most `max` of the type's jobs start in any window of `perMs` ms, across every node (per
   * `concurrencyKey` with `byKey`), on the database's clock. Jobs over the limit wait without
   * failing or spending an attempt, and are never held ahead of a free slot. Stored with the
   * type like the concurrency limits. Default: no rate limit.
   */
  rateLimit?: RateLimitOptions;
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
   * Makes this a recurring job: each fire time of the expression (5 fields, or 6 with seconds
   * first, e.g. `'0 6 * * *'`) enqueues one job of this type (`data` null, `runAt` the fire time),
   * once across all nodes. Kept as the schedule named after the type (see
   * `QueueService.schedules()`), written at each worker's boot; a boot without `cron` on this
   * handler deletes it. A bad expression fails the boot. Default: none.
   */
  cron?: string;
  /** The IANA time zone `cron` is read in (`'Europe/Berlin'`); only with `cron`. Default: `'UTC'`. */
  timezone?: string;
  /**
   * Fire times of `cron` missed while no worker ran: one job on return (`'once'`) or none
   * (`'skip'`); only with `cron`. Default: `'once'`.
   */
  catchUp?: CatchUp;
  /**
   * How long finished jobs of this type are kept, merged over the module's `retention` (`false`:
   * keep them all). Stored in the database when the worker starts, so every node prunes this
   * type alike, a node without this handler included.
   */
  retention?: false | RetentionOptions;
  /**
   * A job of this type that fails for good after running (out of attempts, a
   * `PermanentJobError`, invalid `dto` data, or its worker lost on the last attempt) is also
   * enqueued as a job of this type, with `data` `{ data, error, sourceJobId }`: the failed job's
   * data, the first line of its last error (`Name: message`, never the stack) and its id. The
   * original stays `failed`; the copy has no unique key, keeps the job's priority and `meta`,
   * and is written in the same transaction as the failure. A type without a handler anywhere
   * keeps its copies `pending` until one is deployed. A job failed because a dependency failed
   * never ran and is not copied. Stored in the database when the worker starts (the last worker
   * to start decides; a handler without it clears it). Not this handler's own type. Default:
   * none.
   */
  deadLetter?: string;
  /**
   * Runs each attempt in a transaction of its own (`ctx.manager`) that also writes the job's
   * completion: the handler's writes through `ctx.manager` and the completion commit together, or
   * not at all. A throw, a timeout, a snooze, a cancel or shutdown roll it back, and the attempt is
   * recorded as without it; so does a run that no longer holds its job when it commits. Holds one
   * pooled connection for the whole run. Default: `false`.
   */
  transaction?: boolean;
  /**
   * A class with class-validator decorators: before each run, the job's `data` is turned into
   * an instance of it (class-transformer's `plainToInstance`, so a field with
   * `@Type(() => Date)` is a `Date` again) and validated (class-validator's `validate`); the
   * handler gets the instance as `job.data`. Data that fails fails the job for good
   * (`InvalidJobDataError`, naming the fields and constraints, never the values). Needs the
   * optional peers `class-transformer` and `class-validator` (the boot fails naming the one
   * missing). Default: none, `data` as stored (JSON).
   */
  dto?: Type<object>;
}

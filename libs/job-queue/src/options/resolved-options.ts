import { JobContextHooks } from '../interfaces/job-context-hooks.interface';

// The options as the rest of the library reads them: every value filled in and checked (see
// job-queue.options.ts). The public interfaces say what a user may give; these, what is used.

export interface ResolvedBackoff {
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

/** Milliseconds each finished status is kept; `null`: kept forever. */
export interface ResolvedRetention {
  completedMs: number | null;
  failedMs: number | null;
  cancelledMs: number | null;
}

/**
 * A handler's limits across every node, as `job_types` stores them for the claim; `null`: no
 * such limit.
 */
export interface ResolvedConcurrencyLimits {
  concurrencyPerKey: number | null;
  globalConcurrency: number | null;
  /** Only with `concurrencyPerKey` 1 (checked at boot, and by the table's CHECK). */
  ordered: boolean;
  rateLimit: ResolvedRateLimit | null;
}

/** `max` starts in any window of `perMs`, for the type or (`byKey`) per concurrency key. */
export interface ResolvedRateLimit {
  max: number;
  perMs: number;
  byKey: boolean;
}

export interface ResolvedWorkerOptions {
  concurrency: number;
  batchSize: number;
  /** Jobs claimed ahead of free slots and held here (see `JobQueueWorkerOptions.prefetch`). */
  prefetch: number | 'auto';
  pollIntervalMs: number;
  /** `undefined`: the types of the discovered handlers. */
  jobTypes: string[] | undefined;
  listen: boolean;
  /** `false`: the worker waits for `JobWorker.start()`. */
  autoStart: boolean;
}

export interface ResolvedEventsOptions {
  /** Send NOTIFYs of transitions, and LISTEN for other processes' (see `JobEventsOptions`). */
  remote: boolean;
  bufferSize: number;
  waitPollIntervalMs: number;
  maxLogRowsPerJob: number;
  logCompletedRuns: boolean;
}

/** Every option filled in and checked: what the rest of the library reads. */
export interface ResolvedJobQueueOptions {
  dataSource: string | undefined;
  /** The queue's schema, checked by `schemaOption`. */
  schema: string;
  workerId: string;
  worker: ResolvedWorkerOptions | false;
  staleAfterMs: number;
  heartbeatIntervalMs: number;
  reaperIntervalMs: number;
  /** How long a job may wait for a key with nothing to release it; `false`: no limit. */
  stuckAfterMs: number | false;
  stagerIntervalMs: number;
  statsIntervalMs: number;
  shutdownTimeoutMs: number;
  defaultMaxAttempts: number;
  backoff: ResolvedBackoff;
  maxPayloadBytes: number;
  maxResultBytes: number;
  maxMetaBytes: number;
  /** The module's `context` hooks; `undefined`: none. */
  context: JobContextHooks | undefined;
  /** The `TransactionHost` that enqueues join: its connection name, `true` the default; or off. */
  transactionHost: false | true | string;
  maxBatchSize: number;
  maxBatchBytes: number;
  progressThrottleMs: number;
  /** 0: no timeout. */
  databaseTimeoutMs: number;
  /** For job types no handler has stored a retention for (see `JobPruner`). */
  retention: ResolvedRetention;
  retentionIntervalMs: number;
  events: ResolvedEventsOptions;
}

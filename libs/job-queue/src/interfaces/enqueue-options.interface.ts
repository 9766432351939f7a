import { EntityManager } from 'typeorm';

/** Per-job options of `enqueue` and of each `enqueueMany` item. @publicApi */
export interface JobOptions {
  /** Integer; higher runs first. Default: 100. */
  priority?: number;
  /** Not before this time. Exclusive with `delayMs`. Default: now. */
  runAt?: Date;
  /** Not before this many ms from now (by the database's clock). Exclusive with `runAt`. */
  delayMs?: number;
  /** Attempts before the job fails for good. Default: the handler's, else the module's `defaultMaxAttempts`. */
  maxAttempts?: number;
  /** At most one unfinished job per key: enqueueing a duplicate returns the existing job. */
  uniqueKey?: string;
  /**
   * The key whose slots the job takes (a tenant, an account): with its handler's
   * `concurrencyPerKey: N`, at most N jobs of its type and key run at once, across every node.
   * Ignored by types without `concurrencyPerKey`; a job without a key is not limited by it.
   * 1 to 255 characters.
   */
  concurrencyKey?: string;
}

/** Options that apply to the whole write. @publicApi */
export interface WriteOptions {
  /**
   * Write through this `EntityManager`, e.g. the one of `dataSource.transaction(async (manager) => …)`:
   * the job then exists only if that transaction commits.
   */
  manager?: EntityManager;
}

/** Options of `QueueService.enqueue`. @publicApi */
export interface EnqueueOptions extends JobOptions, WriteOptions {}

/** One item of `QueueService.enqueueMany`. @publicApi */
export interface EnqueueManyItem<T = unknown> extends JobOptions {
  type: string;
  data: T;
}

import type { Type } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { JobStatus } from '../entities/job-status.enum';
import { Job } from '../entities/job.entity';

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
  /**
   * At most one job per key among the jobs whose key counts (by default the unfinished ones):
   * enqueueing a duplicate returns the job that holds the key (outcome `skipped`). Keys are
   * global across job types. 1 to 255 characters, without U+001F.
   */
  uniqueKey?: string;
  /**
   * The statuses in which a job keeps its `uniqueKey`. Default: the unfinished ones (`scheduled`,
   * `pending`, `waiting`, `claimed`, `running`), which must all be listed; add `completed`,
   * `failed` or `cancelled` to refuse a new job while a finished one is kept (see `uniqueForMs`
   * and the module's `retention`). Needs `uniqueKey`.
   */
  uniqueStates?: Array<JobStatus | `${JobStatus}`>;
  /**
   * The key counts within a fixed window of this many ms, counted from the Unix epoch on the
   * database's clock: a job of another window does not hold it (with an hour, one enqueued at
   * 11:59:59 and one at 12:00:01 are both created). At most the retention of the finished
   * statuses in `uniqueStates`. Needs `uniqueKey`.
   */
  uniqueForMs?: number;
  /**
   * Debounce: when a job that holds the key has not started yet (`scheduled`, `pending` or
   * `waiting`, of the same type), its `data` is replaced by this call's and its `run_at` moved to
   * now + `debounceMs` (outcome `replaced`); its other options stay. With no holder, a new job
   * is created to run at now + `debounceMs`. When the holder has started (`claimed`, `running`),
   * the call creates its successor (`created`), `blocked` until the holder finishes whatever its
   * outcome; later calls replace the successor's data (`replaced`). A holder of another type, or
   * a key whose `uniqueStates` name a finished status, makes the call `skipped`. Needs
   * `uniqueKey`; not with `throttleMs`, `runAt` or `delayMs`.
   */
  debounceMs?: number;
  /**
   * Throttle: the first job of the key in each fixed window of this many ms stays, whatever
   * happens to it, and later ones in the window are `skipped`. At most the module's retention of
   * finished jobs. Needs `uniqueKey`; not with `debounceMs`, `uniqueStates` or `uniqueForMs`.
   */
  throttleMs?: number;
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

/**
 * What a job does when one of its dependencies fails for good or is cancelled: `fail` too (the
 * default; its `last_error` names the dependency, and its own dependants follow), or `continue`:
 * it runs once every dependency has finished, whatever became of each
 * (`ctx.dependencyResults()` says).
 *
 * @publicApi
 */
export type DependencyFailurePolicy = 'fail' | 'continue';

/** The options of a job that waits for others. @publicApi */
export interface DependencyOptions {
  /**
   * Ids of existing jobs this one waits for: it is `blocked` until each has finished, then due
   * (or failed, per `onDependencyFailure`). A dependency that completed already counts at once;
   * one that failed or was cancelled applies the policy at once. At most 1,000 ids; an id of no
   * job (never enqueued, or pruned since) is refused. Not with `uniqueKey`, `debounceMs` or
   * `throttleMs`.
   */
  dependsOn?: Array<string | number>;
  /** Default `fail`. Needs `dependsOn`. */
  onDependencyFailure?: DependencyFailurePolicy;
}

/** Options of `QueueService.enqueue`. @publicApi */
export interface EnqueueOptions extends JobOptions, WriteOptions, DependencyOptions {
  /**
   * A class with class-validator decorators: `data` is transformed into it and validated before
   * anything is written, as `@JobHandler(type, { dto })` does before a run; data that fails is
   * refused with `InvalidJobInputError` (`field`: the first failing field, the message naming
   * each with its constraints, never a value). `data` is stored as given. Needs the optional
   * peers `class-transformer` and `class-validator`.
   */
  dto?: Type<object>;
}

/** One item of `QueueService.enqueueMany`. @publicApi */
export interface EnqueueManyItem<T = unknown> extends JobOptions {
  type: string;
  data: T;
}

/**
 * What an enqueue did: `created` a job (a debounce's successor included), `replaced` the data and
 * `run_at` of the key's job not yet started (`debounceMs`), or `skipped` because a job holds the
 * key (`uniqueKey`, `throttleMs`).
 *
 * @publicApi
 */
export type EnqueueOutcome = 'created' | 'replaced' | 'skipped';

/**
 * One result of `enqueueWithOutcome` / `enqueueManyWithOutcome`: the job (the new one, the
 * replaced one, or the one that holds the key) and what the call did.
 *
 * @publicApi
 */
export interface EnqueueResult<T = unknown, R = unknown> {
  job: Job<T, R>;
  outcome: EnqueueOutcome;
}

import { Injectable, Type } from '@nestjs/common';
import { JobHandlerFunction } from '../interfaces/job-context.interface';
import {
  ResolvedBackoff,
  ResolvedConcurrencyLimits,
  ResolvedRetention,
} from '../options/resolved-options';
import { DuplicateJobHandlerError } from '../errors';
import { HandlerSchedule } from '../cron/cron-expression';

/** A handler's options with the module's defaults filled in. */
export interface ResolvedHandlerOptions {
  /** `undefined`: no limit of its own, only `worker.concurrency`. */
  concurrency: number | undefined;
  maxAttempts: number;
  /** `undefined`: no timeout. */
  timeoutMs: number | undefined;
  backoff: ResolvedBackoff;
  /** `undefined`: no `cron`, not a recurring job. */
  schedule: HandlerSchedule | undefined;
  /** The module's `retention` with the handler's merged over it. */
  retention: ResolvedRetention;
  /** `concurrencyPerKey`, `globalConcurrency`, `ordered`, `rateLimit`: stored in `job_types` at start. */
  limits: ResolvedConcurrencyLimits;
  /** Each attempt runs in a transaction that also writes its completion. */
  transaction: boolean;
  /** `data` is transformed into and validated as this class before each run. */
  dto: Type<object> | undefined;
  /** The type a job failed for good is copied to; `null`: none. Stored in `job_types` at start. */
  deadLetter: string | null;
}

export interface RegisteredJobHandler {
  jobType: string;
  /** `Class#method`, for messages. */
  name: string;
  run: JobHandlerFunction;
  options: ResolvedHandlerOptions;
}

/** Job type → handler, filled by the explorer at module init. */
@Injectable()
export class JobHandlerRegistry {
  private readonly handlers = new Map<string, RegisteredJobHandler>();

  add(handler: RegisteredJobHandler): void {
    const existing = this.handlers.get(handler.jobType);
    if (existing) throw new DuplicateJobHandlerError(handler.jobType, existing.name, handler.name);
    this.handlers.set(handler.jobType, handler);
  }

  get(jobType: string): RegisteredJobHandler | undefined {
    return this.handlers.get(jobType);
  }

  jobTypes(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * Whether this node's handler limits the type's concurrency across nodes
   * (`concurrencyPerKey`, `globalConcurrency`): its slots free up in the database, as its
   * outcomes land.
   */
  limitedAcrossNodes(jobType: string): boolean {
    const limits = this.handlers.get(jobType)?.options.limits;
    return (
      limits !== undefined &&
      (limits.concurrencyPerKey !== null || limits.globalConcurrency !== null)
    );
  }

  /** Whether this node's handler gives the type a `rateLimit`. */
  rateLimited(jobType: string): boolean {
    return Boolean(this.handlers.get(jobType)?.options.limits.rateLimit);
  }

  /** How many slots transactional handlers can take at once (each holds a connection). */
  transactionalSlots(concurrency: number): number {
    let slots = 0;
    for (const handler of this.all()) {
      if (handler.options.transaction) slots += handler.options.concurrency ?? concurrency;
    }
    return Math.min(slots, concurrency);
  }

  all(): RegisteredJobHandler[] {
    return [...this.handlers.values()];
  }

  /** Each handler's dead-letter type, as a worker's start stores it in `job_types`. */
  deadLetters(): Array<{ jobType: string; deadLetterType: string | null }> {
    return this.all().map((handler) => ({
      jobType: handler.jobType,
      deadLetterType: handler.options.deadLetter,
    }));
  }

  /** Each handler's concurrency limits, as a worker's start stores them in `job_types`. */
  concurrencyLimits(): Array<{ jobType: string; limits: ResolvedConcurrencyLimits }> {
    return this.all().map((handler) => ({
      jobType: handler.jobType,
      limits: handler.options.limits,
    }));
  }
}

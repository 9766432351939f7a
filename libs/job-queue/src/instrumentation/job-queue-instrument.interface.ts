import { Job } from '../entities/job.entity';

/**
 * How a run ended, as an instrument hears it: `retried` and `snoozed` put the job back in the
 * queue; `cancelled` and `interrupted` (the worker shut down, or handed the job back) write no
 * outcome of the run's own.
 *
 * @publicApi
 */
export type JobRunEnd =
  'completed' | 'failed' | 'retried' | 'snoozed' | 'cancelled' | 'interrupted';

/** What an instrument hears at the end of a run. @publicApi */
export interface JobRunEnded {
  end: JobRunEnd;
  /** The handler's run time, in ms (from the call to its settling). */
  runMs: number;
  /** What the handler threw or rejected with (or the timeout), for `failed` and `retried`. */
  error?: unknown;
}

/** What an instrument does around one run. @publicApi */
export interface JobRunScope {
  /**
   * Runs the handler inside this scope (a trace context made active, say) and returns what `run`
   * returns. Scopes nest in the order instruments were added.
   */
  wrap?<T>(run: () => T): T;
  /** The run ended; called once, synchronously, and must not throw. */
  ended?(ended: JobRunEnded): void;
}

/** What an instrument does around one `enqueue` or `enqueueMany` call. @publicApi */
export interface JobEnqueueScope {
  /** Merged into each enqueued job's `meta` (checked against `maxMetaBytes`). */
  meta?: Record<string, unknown>;
  /** The call returned `created` of its jobs (the others were skipped or replaced), or threw. */
  ended?(
    result:
      { created: readonly Job[]; error?: undefined } | { created?: undefined; error: unknown },
  ): void;
}

/**
 * Something that observes the queue from inside this process: the metrics and tracing entry
 * points are instruments, added with `JobQueueInstruments.add`. Every method is optional, is
 * called synchronously, and must not throw (what one throws is logged, and the queue goes on).
 *
 * @publicApi
 */
export interface JobQueueInstrument {
  /** An enqueue call is about to insert jobs of these types (one entry per job). */
  enqueueStarted?(jobTypes: readonly string[]): JobEnqueueScope | void;
  /** A run of `job` is starting in this process. */
  runStarted?(job: Job): JobRunScope | void;
  /** The reaper of this process took these jobs back (status after: pending, scheduled, failed). */
  rescued?(jobs: ReadonlyArray<{ jobType: string; status: string }>): void;
  /** `QueueService.cancel` cancelled a job of this type. */
  cancelled?(jobType: string): void;
}

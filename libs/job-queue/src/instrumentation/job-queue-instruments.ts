import { Inject, Injectable, Logger } from '@nestjs/common';
import { Job } from '../entities/job.entity';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { JobContextHooks } from '../interfaces/job-context-hooks.interface';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { serialiseData } from '../validation/json-data';
import {
  JobEnqueueScope,
  JobQueueInstrument,
  JobRunEnded,
  JobRunScope,
} from './job-queue-instrument.interface';

/** The scope of an enqueue or a run with no instrument: nothing to do. */
const NO_RUN_SCOPE: Required<JobRunScope> = {
  wrap: (run) => run(),
  ended: () => undefined,
};

/** What the queue asks of its instruments at an enqueue: the meta to store, and the end. */
export interface EnqueueInstrumentation {
  meta: Record<string, unknown> | undefined;
  ended: NonNullable<JobEnqueueScope['ended']>;
}

const NO_ENQUEUE_SCOPE: EnqueueInstrumentation = { meta: undefined, ended: () => undefined };

/**
 * The instruments of this process (metrics, tracing, the module's `context` hooks), called by
 * the queue at an enqueue, around each run, and at a rescue or a cancel. With none added, each
 * call is a check of an empty list: the plain path pays nothing else.
 *
 * @publicApi
 */
@Injectable()
export class JobQueueInstruments {
  private readonly logger = new Logger('JobQueue');
  private instruments: JobQueueInstrument[] = [];
  private readonly maxMetaBytes: number;

  /** @internal Nest's injector makes it: inject `JobQueueInstruments`, do not construct it. */
  constructor(@Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions) {
    this.maxMetaBytes = options.maxMetaBytes;
    if (options.context) this.add(contextInstrument(options.context));
  }

  /** Adds `instrument`; returns its removal. */
  add(instrument: JobQueueInstrument): () => void {
    this.instruments = [...this.instruments, instrument];
    return () => {
      this.instruments = this.instruments.filter((added) => added !== instrument);
    };
  }

  /** @internal Whether any instrument listens. */
  get active(): boolean {
    return this.instruments.length > 0;
  }

  /** @internal An enqueue of jobs of `jobTypes` begins: the meta to store, and its end. */
  enqueueStarted(jobTypes: readonly string[]): EnqueueInstrumentation {
    if (this.instruments.length === 0) return NO_ENQUEUE_SCOPE;
    const scopes: JobEnqueueScope[] = [];
    for (const instrument of this.instruments) {
      const scope = this.call(() => instrument.enqueueStarted?.(jobTypes));
      if (scope) scopes.push(scope);
    }
    if (scopes.length === 0) return NO_ENQUEUE_SCOPE;
    const metas = scopes.flatMap((scope) => (scope.meta ? [scope.meta] : []));
    return {
      meta: metas.length === 0 ? undefined : Object.assign({}, ...metas),
      ended: (result) => {
        for (const scope of scopes) this.call(() => scope.ended?.(result));
      },
    };
  }

  /**
   * @internal An insert of jobs of `jobTypes` (one entry per job) as the instruments see it:
   * `insert` gets what they capture as the JSON of each job's `meta` (null: nothing), and its
   * result's `created` jobs end the enqueue. Whatever path inserts jobs (an enqueue, a flow, a
   * cron fire, `runSchedule`) goes through here, so metrics and traces see every new job.
   */
  async enqueue<R>(
    jobTypes: readonly string[],
    insert: (metaJson: string | null) => Promise<R>,
    created: (result: R) => readonly Job[],
  ): Promise<R> {
    if (this.instruments.length === 0 || jobTypes.length === 0) return insert(null);
    const scope = this.enqueueStarted(jobTypes);
    let result: R;
    try {
      const metaJson =
        scope.meta === undefined
          ? null
          : serialiseData('meta', scope.meta, this.maxMetaBytes, 'maxMetaBytes');
      result = await insert(metaJson);
    } catch (error) {
      scope.ended({ error });
      throw error;
    }
    scope.ended({ created: created(result) });
    return result;
  }

  /** @internal A run of `job` starts: the scope its handler runs in, and its end. */
  runStarted(job: Job): Required<JobRunScope> {
    if (this.instruments.length === 0) return NO_RUN_SCOPE;
    const scopes: JobRunScope[] = [];
    for (const instrument of this.instruments) {
      const scope = this.call(() => instrument.runStarted?.(job));
      if (scope) scopes.push(scope);
    }
    if (scopes.length === 0) return NO_RUN_SCOPE;
    return {
      // The first instrument's scope is the outermost.
      wrap: <T>(run: () => T): T =>
        scopes.reduceRight<() => T>(
          (inner, scope) => (scope.wrap ? () => scope.wrap!(inner) : inner),
          run,
        )(),
      ended: (ended: JobRunEnded) => {
        for (const scope of scopes) this.call(() => scope.ended?.(ended));
      },
    };
  }

  /** @internal The reaper of this process took these jobs back. */
  rescued(jobs: ReadonlyArray<{ jobType: string; status: string }>): void {
    if (jobs.length === 0) return;
    for (const instrument of this.instruments) this.call(() => instrument.rescued?.(jobs));
  }

  /** @internal `QueueService.cancel` cancelled a job of `jobType`. */
  cancelled(jobType: string): void {
    for (const instrument of this.instruments) this.call(() => instrument.cancelled?.(jobType));
  }

  /** An instrument's call: what it throws is logged, never the queue's failure. */
  private call<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      this.logger.error(
        `A job queue instrument threw: ${(error as Error)?.stack ?? String(error)}`,
      );
      return undefined;
    }
  }
}

/** The module's `context` hooks as an instrument: captured into `meta`, restored around runs. */
function contextInstrument({ capture, restore }: JobContextHooks): JobQueueInstrument {
  return {
    enqueueStarted: capture ? () => ({ meta: capture() }) : undefined,
    runStarted: restore
      ? (job) => ({ wrap: <T>(run: () => T): T => restore(job.meta ?? null, run) })
      : undefined,
  };
}

import { Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Job } from '../entities/job.entity';
import { JobContext } from '../interfaces/job-context.interface';
import { Queryable } from '../sql/queryable';
import { SnoozeJob } from '../errors/snooze-job';
import { JobProgressReporter, UnwrittenProgress } from './job-progress.reporter';
import { RunningJob } from './running-job';
import { SupersededWrites } from './superseded-writes';
import { JobEventStream } from '../events/job-event-stream';
import { RunLog } from './run-log';
import { checkLogData, checkLogMessage } from '../validation/log-line.checks';
import { RunTransaction } from './run-transaction';
import { DependencyResults } from '../interfaces/flow.interface';
import { readDependencyResults } from '../sql/dependency-results.query';
import { toDependencyResults } from '../queue/dependency-results';

/** What `ctx.manager` says when the run has no transaction. */
const NO_MANAGER =
  'ctx.manager is set only in a handler declared with @JobHandler(type, { transaction: true }) ' +
  'and inside ctx.transaction(fn); use ctx.transaction(async (manager) => ...) here';

/** How a run's context reaches transactions (see `JobExecutor`). */
export interface RunTransactions {
  /**
   * The run's own transaction (`transaction: true`), open before the handler starts; or a
   * test's transaction (`JobQueueTester.drain({ manager })`) that every write joins.
   */
  readonly run: RunTransaction | EntityManager | undefined;
  /** `ctx.transaction(fn)` without one: opens a transaction, runs `fn`, completes the job in it. */
  complete<R>(ctx: HandlerContext, fn: (manager: EntityManager) => Promise<R>): Promise<R>;
}

/**
 * The `ctx` a handler receives, for one run of its job. Its logger, progress reporter and abort
 * signal are made on first use: a worker starts thousands of jobs a second, and most handlers
 * use none of them. Its progress writes carry the run's fencing token.
 */
export class HandlerContext implements JobContext {
  private loggerInstance: Logger | undefined;
  private reporter: JobProgressReporter | undefined;
  // The methods a handler has read so far, bound to this run (see `progress`).
  private boundProgress: JobContext['progress'] | undefined;
  private boundLog: JobContext['log'] | undefined;
  private boundTransaction: JobContext['transaction'] | undefined;
  private boundDependencyResults: JobContext['dependencyResults'] | undefined;

  constructor(
    private readonly entry: RunningJob,
    private readonly db: Queryable,
    private readonly schema: string,
    private readonly progressThrottleMs: number,
    private readonly superseded: SupersededWrites,
    private readonly events: JobEventStream,
    private readonly notifyOrigin: string | undefined,
    private readonly maxLogRowsPerJob: number,
    private readonly transactions: RunTransactions,
  ) {}

  /** The transaction of a `ctx.transaction(fn)` under way: `ctx.manager` meanwhile. */
  current: RunTransaction | undefined;
  /** Set once a `ctx.transaction(fn)` committed the job's completion: the run is over. */
  completedInTransaction = false;

  get manager(): EntityManager {
    const { run } = this.transactions;
    if (run) return run instanceof RunTransaction ? run.manager : run;
    if (this.current) return this.current.manager;
    throw new Error(NO_MANAGER);
  }

  /** Bound on first read, like `progress`. */
  get transaction(): JobContext['transaction'] {
    return (this.boundTransaction ??= <R>(fn: (manager: EntityManager) => Promise<R>) => {
      if (typeof fn !== 'function') {
        return Promise.reject(new TypeError('ctx.transaction(fn): fn must be a function'));
      }
      const { run } = this.transactions;
      if (run) return fn(run instanceof RunTransaction ? run.manager : run);
      return this.transactions.complete(this, fn);
    });
  }

  get job(): Job {
    return this.entry.job;
  }

  get signal(): AbortSignal {
    return this.entry.signal;
  }

  get logger(): Logger {
    this.loggerInstance ??= new Logger(`JobQueue:${this.job.jobType}#${this.job.id}`);
    return this.loggerInstance;
  }

  /**
   * Bound to this run on first read, so that `const { progress } = ctx` works; a handler that
   * reads none of `progress`, `log`, `transaction` and `dependencyResults` makes no function.
   */
  get progress(): JobContext['progress'] {
    return (this.boundProgress ??= (percent, stage) => this.runReporter().report(percent, stage));
  }

  /** Bound on first read, like `progress`. Checks at once; the line waits for the run's next write. */
  get log(): JobContext['log'] {
    return (this.boundLog ??= (message, data) => {
      const text = checkLogMessage(message);
      const dataJson = checkLogData(data);
      this.runReporter().logLine(text, dataJson);
    });
  }

  private runReporter(): JobProgressReporter {
    this.reporter ??= new JobProgressReporter(
      this.db,
      this.schema,
      this.entry,
      this.progressThrottleMs,
      this.logger,
      this.superseded,
      this.events,
      this.notifyOrigin,
      new RunLog(this.entry.job, this.maxLogRowsPerJob),
    );
    return this.reporter;
  }

  /** Bound on first read, like `progress`. */
  get dependencyResults(): JobContext['dependencyResults'] {
    return (this.boundDependencyResults ??= async (): Promise<DependencyResults> =>
      toDependencyResults(await readDependencyResults(this.db, this.schema, this.job.id)));
  }

  /** Uses nothing of the run, so it needs no binding. The executor recognises the returned value. */
  snooze(delayMs: number): SnoozeJob {
    return new SnoozeJob(delayMs);
  }

  /** The last progress a write of this run landed with (none if never reported). */
  get landedProgress(): UnwrittenProgress | undefined {
    return this.reporter?.landed;
  }

  /** Stops progress writes; returns what no write has carried yet (none if never reported). */
  close(): Promise<UnwrittenProgress | undefined> | undefined {
    return this.reporter?.takeUnwritten();
  }

  /** The run's log rows (none if the handler neither logged nor reported progress). */
  get runLog(): RunLog | undefined {
    return this.reporter?.log;
  }
}

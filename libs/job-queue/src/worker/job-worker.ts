import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import {
  ResolvedConcurrencyLimits,
  ResolvedJobQueueOptions,
  ResolvedWorkerOptions,
} from '../options/resolved-options';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { WorkerShutdownError } from '../errors';
import { databaseErrorText } from '../errors/database-error.util';
import { optionValidator } from '../validation/option.validator';
import { StaleJobReaper } from '../maintenance/stale-job-reaper';
import { ScheduledJobStager } from '../maintenance/scheduled-job-stager';
import { CronScheduler } from '../cron/cron-scheduler';
import { JobPruner } from '../maintenance/job-pruner';
import { JobStatsRefresher } from '../maintenance/job-stats-refresher';
import { releaseWorkerJobs } from '../sql/release-jobs.query';
import { storeConcurrencyLimits } from '../sql/store-concurrency-limits.query';
import { storeDeadLetters } from '../sql/store-dead-letters.query';
import { poolMax } from '../sql/dedicated-connection';
import { JobCompleter } from './job-completer';
import { JobHeartbeat } from './job-heartbeat';
import { JobListener } from './job-listener';
import { JobPoller } from './job-poller';
import { RunningJobs } from './running-jobs';

/**
 * The types a worker claims: its `@JobHandler`s', or `worker.jobTypes`, which must all have a
 * handler (an `InvalidJobQueueOptionsError` otherwise).
 */
export function jobTypesToClaim(
  worker: ResolvedWorkerOptions,
  registry: JobHandlerRegistry,
): string[] {
  if (worker.jobTypes === undefined) return registry.jobTypes();
  const missing = worker.jobTypes.filter((jobType) => !registry.get(jobType));
  if (missing.length > 0) {
    optionValidator.fail(
      'worker.jobTypes',
      missing,
      'job types that have a @JobHandler in this app',
    );
  }
  return worker.jobTypes;
}

/** `{concurrencyPerKey: 1, ordered: true}`: the limits set, for the boot's log; `none`. */
function limitsText(limits: ResolvedConcurrencyLimits): string {
  const set = [
    limits.concurrencyPerKey === null ? [] : [`concurrencyPerKey: ${limits.concurrencyPerKey}`],
    limits.globalConcurrency === null ? [] : [`globalConcurrency: ${limits.globalConcurrency}`],
    limits.ordered ? ['ordered: true'] : [],
    limits.rateLimit === null
      ? []
      : [
          `rateLimit: {max: ${limits.rateLimit.max}, perMs: ${limits.rateLimit.perMs}` +
            (limits.rateLimit.byKey ? ', byKey: true}' : '}'),
        ],
  ].flat();
  return set.length === 0 ? 'none' : `{${set.join(', ')}}`;
}

/**
 * This process's worker. It starts by itself once the application has bootstrapped, unless
 * `worker: { autoStart: false }`; then the app calls `start()` when it is ready. `stop()` drains
 * exactly as application shutdown does: stop claiming, let running handlers finish within
 * `shutdownTimeoutMs`, abort the rest, write every outcome, and hand back whatever this worker
 * still holds, so no job waits `staleAfterMs` for the reaper. A stopped worker can start again,
 * and shutdown stops a started one.
 *
 * `start()` and `stop()` take turns: each waits for the one called before it to finish, so
 * `stop()` during a `start()` stops the worker that start made.
 *
 * @publicApi
 */
@Injectable()
export class JobWorker {
  private readonly logger = new Logger('JobQueue');
  private started = false;
  /** The last start/stop asked for, settled without error: the next one runs after it. */
  private turn: Promise<unknown> = Promise.resolve();

  /** @internal Nest's injector makes it: inject `JobWorker`, do not construct it. */
  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly poller: JobPoller,
    private readonly listener: JobListener,
    private readonly heartbeat: JobHeartbeat,
    private readonly completer: JobCompleter,
    private readonly reaper: StaleJobReaper,
    private readonly stager: ScheduledJobStager,
    private readonly running: RunningJobs,
    private readonly cron: CronScheduler,
    private readonly pruner: JobPruner,
    private readonly statsRefresher: JobStatsRefresher,
  ) {}

  /** True while the worker is started: from when `start()` starts it until `stop()` drains it. */
  get isRunning(): boolean {
    return this.started;
  }

  /**
   * Starts claiming the types of this app's `@JobHandler`s (or `worker.jobTypes`). Call it once
   * the application has initialised: handlers are collected during init. Does nothing when the
   * worker is running already.
   *
   * @throws InvalidJobQueueOptionsError when the app has no worker (`worker: false`), or
   * `worker.jobTypes` names a type without a handler.
   */
  start(): Promise<void> {
    return this.takeTurn(() => this.startNow());
  }

  /**
   * Stops claiming and drains (see the class). Resolves once every outcome is written and the
   * unfinished jobs are handed back. Does nothing when the worker is not running.
   */
  stop(): Promise<void> {
    return this.takeTurn(() => this.stopNow());
  }

  private takeTurn(action: () => Promise<void>): Promise<void> {
    const next = this.turn.then(action);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async startNow(): Promise<void> {
    const worker = this.options.worker;
    if (worker === false) {
      optionValidator.fail(
        'worker',
        false,
        'worker options (or none) for JobWorker.start(): with worker: false this app is ' +
          'enqueue-only and has no worker to start',
      );
    }
    if (this.started) return;
    const jobTypes = jobTypesToClaim(worker, this.registry);
    // Before anything starts: a boot that cannot write its handlers' schedules fails whole.
    await this.cron.syncHandlerSchedules(this.registry.all());
    // So do its handlers' limits, stored before this worker's first claim reads them.
    await this.storeConcurrencyLimits();
    // And their dead-letter types, before this worker can fail a job for good.
    await this.storeDeadLetters();
    this.started = true;
    this.warnIfPoolTooSmall(worker.concurrency);
    this.completer.resume();
    this.heartbeat.start();
    this.reaper.start();
    this.stager.start();
    this.cron.start(); // stored schedules fire on every worker, with or without handlers
    await this.pruner.start();
    this.statsRefresher.start();
    if (jobTypes.length === 0) {
      this.logger.warn(
        'No @JobHandler found: this worker claims nothing (set worker: false to silence)',
      );
      return;
    }
    if (worker.listen) {
      await this.listener.start(
        (behind) => this.poller.jobsInserted(behind),
        (jobType) => void this.poller.dropPaused(jobType),
      );
    }
    this.poller.start(jobTypes);
    this.logger.log(
      `Worker ${this.options.workerId} started: ${jobTypes.join(', ')} (concurrency ${worker.concurrency})`,
    );
  }

  /**
   * Stores every handler's `concurrencyPerKey`, `globalConcurrency` and `ordered` in `job_types`,
   * which every node's claim reads, and logs each type whose limits this boot changed. Two
   * deployments that disagree overwrite each other: the last to start decides.
   */
  private async storeConcurrencyLimits(): Promise<void> {
    const changes = await storeConcurrencyLimits(
      this.dataSource,
      this.options.schema,
      this.registry.concurrencyLimits(),
    );
    for (const change of changes) {
      // A type stored for the first time without limits is written, yet nothing changed.
      const from = change.previous === null ? 'none' : limitsText(change.previous);
      const to = limitsText(change.current);
      if (from === to) continue;
      const released =
        change.releasedWaiting > 0
          ? `; ${change.releasedWaiting} waiting job(s) moved back to pending`
          : '';
      this.logger.log(
        `Job type ${change.jobType}: concurrency limits changed from ${from} to ${to} ` +
          `(the last worker to start decides)${released}`,
      );
    }
  }

  /**
   * Stores every handler's `deadLetter` in `job_types`, which the trigger that copies a job
   * failed for good reads on every node, and logs each type whose dead-letter type this boot
   * changed. Two deployments that disagree overwrite each other: the last to start decides.
   */
  private async storeDeadLetters(): Promise<void> {
    const changes = await storeDeadLetters(
      this.dataSource,
      this.options.schema,
      this.registry.deadLetters(),
    );
    for (const change of changes) {
      this.logger.log(
        `Job type ${change.jobType}: ` +
          (change.deadLetterType === null
            ? 'jobs failed for good are no longer copied to a dead-letter type'
            : `jobs failed for good are copied to ${change.deadLetterType}`) +
          ' (the last worker to start decides)',
      );
    }
  }

  /**
   * Handlers that use the database take pooled connections, and so do the worker's claims and
   * outcome writes: with fewer than `concurrency + 1` connections, handlers and the worker wait
   * for each other. (The heartbeat and LISTEN have connections of their own.) A transactional
   * handler (`transaction: true`, `ctx.transaction`) holds its connection for the whole run,
   * which the rule already counts: one per slot, and one for the worker; the warning says how
   * many slots may hold one, since the worker then waits for whole runs, not statements.
   */
  private warnIfPoolTooSmall(concurrency: number): void {
    const max = poolMax(this.dataSource);
    if (max >= concurrency + 1) return;
    const held = this.registry.transactionalSlots(concurrency);
    const holding =
      held > 0
        ? ` ${held} slot(s) run transactional handlers, each holding a connection for its ` +
          `whole run, so the worker may wait for whole runs to end.`
        : '';
    this.logger.warn(
      `The data source's pool has ${max} connection(s), fewer than worker.concurrency ` +
        `(${concurrency}) + 1: handlers that use the database can wait for a connection while ` +
        `the worker's claims and outcome writes wait too.${holding} Set the data source's ` +
        `poolSize (or extra.max) to at least ${concurrency + 1}, or lower worker.concurrency`,
    );
  }

  private async stopNow(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const deadline = Date.now() + this.options.shutdownTimeoutMs;
    // Leases must be renewed until the jobs are handed back, whatever the host's ScheduleModule
    // does to its registry meanwhile.
    this.heartbeat.detach();
    await Promise.all([
      this.poller.stop(),
      this.listener.stop(),
      this.reaper.stop(),
      this.stager.stop(),
      this.cron.stop(),
      this.pruner.stop(),
      this.statsRefresher.stop(),
    ]);
    if (!(await this.running.waitUntilIdle(this.options.shutdownTimeoutMs))) {
      const left = this.running.all();
      this.logger.warn(`Aborting ${left.length} job(s) still running after shutdownTimeoutMs`);
      for (const entry of left) entry.abort(new WorkerShutdownError());
      // Nothing new starts (the poller has stopped): idle means every aborted job is done.
      await this.running.waitUntilIdle();
    }
    // Outcomes get a little time of their own even when the handlers used it all up.
    await this.completer.drain(Math.max(deadline, Date.now() + 1_000));
    await this.heartbeat.stop();
    try {
      const released = await releaseWorkerJobs(
        this.dataSource,
        this.options.schema,
        this.options.workerId,
      );
      if (released.length > 0) {
        this.logger.log(`Handed ${released.length} unfinished job(s) back to the queue`);
      }
    } catch (error) {
      // Stopping must finish even with the database gone: the reaper recovers these jobs later.
      this.logger.error(
        `Could not hand unfinished jobs back (${databaseErrorText(error)}); ` +
          `they return to the queue after staleAfterMs`,
      );
    }
    this.logger.log(`Worker ${this.options.workerId} stopped`);
  }
}

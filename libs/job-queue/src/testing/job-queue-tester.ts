import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';
import { QueueClock } from '../periodic/queue-clock';
import { CronScheduler } from '../cron/cron-scheduler';
import { JobExecutor } from '../worker/job-executor';
import { JobCompleter, QueuedOutcome } from '../worker/job-completer';
import { RunningJobs } from '../worker/running-jobs';
import { StaleJobReaper } from '../maintenance/stale-job-reaper';
import { JobPruner } from '../maintenance/job-pruner';
import { claimPolicyOf } from '../worker/claim-policy';
import { claimAndStartJobs } from '../sql/claim-job-batch.query';
import { Queryable, queryRows, toJob } from '../sql/queryable';
import { finishJobs } from '../sql/finish-jobs.query';
import { STAGE_BATCH_SIZE, stageScheduledJobs } from '../sql/stage-scheduled-jobs.query';
import { queueSchema } from '../sql/queue-schema';
import { storeConcurrencyLimits } from '../sql/store-concurrency-limits.query';
import { storeDeadLetters } from '../sql/store-dead-letters.query';
import { jobInput } from '../validation/input.validator';
import { checkInteger } from '../validation/job-input.checks';
import { serialiseData } from '../validation/json-data';
import { JobQueueAssertionError } from './job-queue-assertion.error';
import { RecordingJobContext } from './recording-job-context';
import { describeFilter, listJobs, matchesFilter, readEnqueuedJobs } from './enqueued-jobs';
import {
  DrainOptions,
  DrainOutcome,
  DrainRun,
  DrainSummary,
  EnqueuedJobExpectation,
  EnqueuedJobFilter,
  PerformResult,
} from './testing.types';

const DEFAULT_MAX_JOBS = 1_000;
/** Jobs claimed at once when the module has no worker options (`worker: false`). */
const DEFAULT_DRAIN_BATCH = 10;
/** How long a drain waits for its outcomes to be written. */
const OUTCOME_WRITE_MS = 30_000;

/** Where `JobQueueTester.from` finds the queue's providers: a module ref or an app. @publicApi */
export interface JobQueueProviderLookup {
  get<T = unknown>(token: unknown, options: { strict: false }): T;
}

/**
 * Runs a test's jobs on demand, through the same claim, handlers and outcome writes as a worker,
 * at a clock the test moves; and asserts what was enqueued. Provided by `JobQueueTestingModule`.
 *
 * @publicApi
 */
@Injectable()
export class JobQueueTester {
  private prepared: Promise<void> | undefined;
  private performed = 0;

  /** @internal Nest's injector makes it: inject `JobQueueTester`, do not construct it. */
  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly clock: QueueClock,
    private readonly cron: CronScheduler,
    private readonly executor: JobExecutor,
    private readonly completer: JobCompleter,
    private readonly running: RunningJobs,
    private readonly reaper: StaleJobReaper,
    private readonly pruner: JobPruner,
  ) {}

  /**
   * A tester for an app that imports `JobQueueModule` itself (see
   * `JobQueueTestingModule.overrideIn`), made from that module's providers.
   */
  static from(app: JobQueueProviderLookup): JobQueueTester {
    const get = <T>(token: unknown): T => app.get<T>(token, { strict: false });
    return new JobQueueTester(
      get(JOB_QUEUE_DATA_SOURCE),
      get(RESOLVED_JOB_QUEUE_OPTIONS),
      get(JobHandlerRegistry),
      get(QueueClock),
      get(CronScheduler),
      get(JobExecutor),
      get(JobCompleter),
      get(RunningJobs),
      get(StaleJobReaper),
      get(JobPruner),
    );
  }

  /** The queue's time now: real time plus however far the test moved it. */
  now(): Date {
    return this.clock.now() ?? new Date();
  }

  /** Moves the queue's clock `ms` forward: later jobs, retries and cron fire times fall due. */
  advanceTime(ms: number): void {
    this.clock.advance(
      jobInput.integer('ms', ms, 0, Number.MAX_SAFE_INTEGER, 'a whole number of ms, 0 or more'),
    );
  }

  /** Moves the queue's clock to `date` (never back: a queue's time does not run backwards). */
  setTime(date: Date): void {
    if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
      jobInput.fail('date', date, 'a valid Date');
    }
    const now = this.now();
    const ahead = date.getTime() - now.getTime();
    if (ahead < 0) {
      jobInput.fail('date', date.toISOString(), `a time not before ${now.toISOString()}`);
    }
    this.clock.advance(Math.ceil(ahead));
  }

  /**
   * Runs every due job of `types`, as a worker would at the queue's clock, until none is due:
   * first the reaper (jobs whose lease ran out by that clock go back to the queue, or fail),
   * the pruner (finished jobs past their retention are deleted), cron and the stager, then a
   * claim, its handlers and their outcomes, and again (jobs that handlers enqueue included).
   * Retries and snoozes wait for their time: `advanceTime` to reach them. Stops with a
   * `JobQueueAssertionError` after `maxJobs` runs if jobs are still due.
   *
   * With `manager` (a test's transaction, see `withRollback`), the reaper, the pruner, the
   * stager, the claim, the handlers' progress and the outcomes go through it, since no other
   * connection sees its rows; cron does not tick (it would commit its jobs outside), and what
   * handlers write through their own connections commits as usual.
   */
  async drain(options: DrainOptions = {}): Promise<DrainSummary> {
    const opts = jobInput.plainObject('options', options) as DrainOptions;
    const maxJobs =
      opts.maxJobs === undefined ? DEFAULT_MAX_JOBS : checkInteger('maxJobs', opts.maxJobs, 1);
    const types = this.typesToDrain(opts.types);
    const db: Queryable = opts.manager ?? this.dataSource;
    // Once per app, as a worker's start does; a failed attempt is tried again next time.
    await (this.prepared ??= this.prepare().catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    }));
    const policy = claimPolicyOf(types, this.registry, this.options);
    const batch =
      this.options.worker === false ? DEFAULT_DRAIN_BATCH : this.options.worker.concurrency;
    const runs: DrainRun[] = [];
    await this.reaper.rescueOnce(this.now(), db);
    await this.pruner.pruneOnce(this.now(), db);
    for (;;) {
      const at = this.now();
      // Cron first: a fire time enqueues its job ahead as `scheduled`, which the stager moves.
      if (!opts.manager) await this.cron.tickOnce(at);
      while ((await stageScheduledJobs(db, this.options.schema, at)) === STAGE_BATCH_SIZE);
      const room = Math.min(batch, maxJobs - runs.length);
      if (room === 0) {
        if (await this.anyDue(db, types, at)) throw this.drainLimit(maxJobs, types);
        break;
      }
      const { jobs } = await claimAndStartJobs(
        db,
        this.options.schema,
        this.options.workerId,
        { ...policy, caps: types.map(() => null) },
        room,
        undefined,
        false,
        at,
      );
      if (jobs.length === 0) break;
      await this.run(jobs, opts.manager);
      runs.push(...(await this.outcomesOf(db, jobs)));
    }
    return summarize(runs);
  }

  /**
   * Runs `fn` in a transaction that is rolled back once it returns (or throws): what the test
   * enqueued and drained through `manager` is gone afterwards. Returns what `fn` returned.
   */
  async withRollback<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    const rollback = new Error('rolled back by JobQueueTester.withRollback');
    let result: T | undefined;
    try {
      await this.dataSource.transaction(async (manager) => {
        result = await fn(manager);
        throw rollback;
      });
    } catch (error) {
      if (error !== rollback) throw error;
    }
    return result as T;
  }

  /** Runs the claimed jobs to their outcomes, written before this resolves. */
  private async run(jobs: readonly Job[], manager: EntityManager | undefined): Promise<void> {
    if (!manager) {
      for (const job of jobs) this.executor.start(job);
      await this.running.waitUntilIdle();
      await this.completer.drain(Date.now() + OUTCOME_WRITE_MS);
      this.completer.resume();
      return;
    }
    const outcomes: QueuedOutcome[] = [];
    for (const job of jobs) {
      this.executor.start(job, { db: manager, outcome: (outcome) => outcomes.push(outcome) });
    }
    await this.running.waitUntilIdle();
    const at = this.clock.now();
    await finishJobs(manager, this.options.schema, this.options.workerId, outcomes, false, at);
  }

  /**
   * Runs the handler of `type` once with `data` (checked and through JSON, as `enqueue` stores
   * it), outside the queue: no row, no claim, no retry. Returns its result (as a run's is stored)
   * with the progress and log lines it reported; throws what it throws. A `transaction: true`
   * handler runs in a transaction of the data source's that commits when it returns (there is
   * no outcome to write with it); `ctx.transaction(fn)` commits when `fn` resolves.
   */
  async perform<R = unknown>(type: string, data: unknown): Promise<PerformResult<R>> {
    const handler = this.registry.get(type);
    if (!handler) return jobInput.fail('type', type, 'a job type with a @JobHandler in this app');
    const job = new Job() as Job<unknown>;
    const now = this.now();
    Object.assign(job, {
      id: `perform-${++this.performed}`,
      jobType: type,
      priority: 0,
      status: JobStatus.Running,
      // Refused and stored as enqueue would: the handler sees what it would read back.
      data: JSON.parse(serialiseData('data', data, this.options.maxPayloadBytes)),
      progress: 0,
      currentStage: null,
      attempts: 1,
      runToken: 1,
      createdAt: now,
      startedAt: now,
      claimedAt: now,
      runAt: now,
      meta: null,
    });
    const ctx = new RecordingJobContext(job, this.dataSource);
    const returned = handler.options.transaction
      ? await this.dataSource.transaction(async (manager) => {
          ctx.runManager = manager;
          return handler.run(job, ctx);
        })
      : await handler.run(job, ctx);
    // As a run's result is stored: null for none, refused past maxResultBytes.
    const resultJson =
      returned == null
        ? 'null'
        : serialiseData('result', returned, this.options.maxResultBytes, 'maxResultBytes');
    return {
      result: JSON.parse(resultJson) as R,
      progress: ctx.progressCalls,
      logs: ctx.logLines,
    };
  }

  /** The jobs `filter` describes, oldest first, in any status unless it names some. */
  async enqueuedJobs(filter: EnqueuedJobFilter = {}): Promise<Job[]> {
    const jobs = await readEnqueuedJobs(
      filter.manager ?? this.dataSource,
      this.options.schema,
      filter.type,
    );
    return jobs.filter((job) => matchesFilter(job, filter));
  }

  /**
   * Throws a `JobQueueAssertionError` listing what was enqueued unless a job matches (exactly
   * `count` of them, when given). Returns the matching jobs.
   */
  async expectEnqueued(expectation: EnqueuedJobExpectation): Promise<Job[]> {
    const { count, ...filter } = expectation;
    const matching = await this.enqueuedJobs(filter);
    const ok = count === undefined ? matching.length > 0 : matching.length === count;
    if (!ok) {
      const wanted = count === undefined ? 'at least one job' : `${count} job(s)`;
      throw new JobQueueAssertionError(
        `Expected ${wanted} matching ${describeFilter(filter)}, found ${matching.length}. ` +
          `Enqueued:\n${listJobs(await this.enqueuedJobs({ manager: filter.manager }))}`,
      );
    }
    return matching;
  }

  /** Throws a `JobQueueAssertionError` listing the matching jobs if any job matches. */
  async expectNotEnqueued(filter: EnqueuedJobFilter): Promise<void> {
    const matching = await this.enqueuedJobs(filter);
    if (matching.length > 0) {
      throw new JobQueueAssertionError(
        `Expected no job matching ${describeFilter(filter)}, found ${matching.length}:\n` +
          listJobs(matching),
      );
    }
  }

  /**
   * What a worker writes at start: its handlers' schedules, concurrency limits, dead-letter types
   * and retention.
   */
  private async prepare(): Promise<void> {
    await this.pruner.storeRetention();
    await this.cron.syncHandlerSchedules(this.registry.all());
    await storeConcurrencyLimits(
      this.dataSource,
      this.options.schema,
      this.registry.concurrencyLimits(),
    );
    await storeDeadLetters(this.dataSource, this.options.schema, this.registry.deadLetters());
  }

  private typesToDrain(types: unknown): string[] {
    if (types === undefined) return this.registry.jobTypes();
    if (!Array.isArray(types)) jobInput.fail('types', types, 'an array of job types');
    (types as unknown[]).forEach((type, i) => {
      if (typeof type !== 'string' || !this.registry.get(type)) {
        jobInput.fail(`types[${i}]`, type, 'a job type with a @JobHandler in this app');
      }
    });
    return types as string[];
  }

  /** The claimed jobs as their runs left them. */
  private async outcomesOf(db: Queryable, claimed: readonly Job[]): Promise<DrainRun[]> {
    const schema = queueSchema(this.options.schema);
    const rows = await queryRows(db, `SELECT * FROM ${schema.jobs} WHERE id = ANY($1::bigint[])`, [
      claimed.map((job) => job.id),
    ]);
    const byId = new Map(rows.map((row) => [String(row.id), toJob(row)]));
    return claimed.flatMap((run) => {
      const job = byId.get(run.id);
      return job ? [{ job, outcome: outcomeOf(run, job) }] : [];
    });
  }

  private async anyDue(db: Queryable, types: string[], at: Date): Promise<boolean> {
    const schema = queueSchema(this.options.schema);
    const [row] = await queryRows<{ due: boolean }>(
      db,
      `SELECT EXISTS (SELECT 1 FROM ${schema.jobs} WHERE status = 'pending'
         AND job_type = ANY($1::text[]) AND run_at <= $2::timestamptz) AS due`,
      [types, at],
    );
    return row.due;
  }

  private drainLimit(maxJobs: number, types: string[]): JobQueueAssertionError {
    return new JobQueueAssertionError(
      `drain() ran ${maxJobs} job(s) (maxJobs) and jobs of ${types.join(', ')} are still due: ` +
        'a handler may be enqueueing jobs as fast as they run (a job that re-enqueues itself). ' +
        'Raise maxJobs if the test means to run more.',
    );
  }
}

/** What a run did, from its job's row after the outcome landed. */
function outcomeOf(run: Job, after: Job): DrainOutcome {
  switch (after.status) {
    case JobStatus.Completed:
      return 'completed';
    case JobStatus.Failed:
      return 'failed';
    case JobStatus.Cancelled:
      return 'cancelled';
    default:
      // Back in the queue: a retry spends its attempt, a snooze gives it back.
      return after.attempts < run.attempts ? 'snoozed' : 'retried';
  }
}

function summarize(runs: DrainRun[]): DrainSummary {
  const count = (outcome: DrainOutcome): number =>
    runs.filter((run) => run.outcome === outcome).length;
  return {
    completed: count('completed'),
    failed: count('failed'),
    retried: count('retried'),
    snoozed: count('snoozed'),
    cancelled: count('cancelled'),
    runs,
  };
}

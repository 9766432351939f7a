import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from './job-queue.constants';
import { ResolvedJobQueueOptions } from './options/resolved-options';
import { Job } from './entities/job.entity';
import { JobStatus } from './entities/job-status.enum';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobStateConflictError,
  ScheduleNotFoundError,
} from './errors';
import {
  EnqueueManyItem,
  EnqueueResult,
  EnqueueOptions,
  WriteOptions,
} from './interfaces/enqueue-options.interface';
import { BATCH_NOT_AN_ARRAY, SCHEDULE_OWNED_BY_HANDLER } from './job-queue.messages';
import {
  checkInteger,
  checkJobId,
  checkJobType,
  checkProgress,
  checkStage,
} from './validation/job-input.checks';
import { jobInput } from './validation/input.validator';
import { JobRow, Queryable, toJob } from './sql/queryable';
import { getJobRow } from './sql/get-job.query';
import { updateProgressRow } from './sql/update-progress.query';
import { cancelJobRow } from './sql/cancel-job.query';
import { retryJobRow } from './sql/retry-job.query';
import { findStaleJobRows } from './sql/find-stale-jobs.query';
import { pauseJobType } from './sql/pause-job-type.query';
import { resumeJobType } from './sql/resume-job-type.query';
import { JobSchedule, ScheduleOptions } from './interfaces/schedule-options.interface';
import { checkedSchedule, checkScheduleName, withFirstFireAt } from './cron/schedule-input';
import { databaseNow } from './sql/database-now.query';
import { QueueClock } from './periodic/queue-clock';
import { JobInsertRow } from './sql/insert-jobs.query';
import { upsertSchedule } from './cron/sql/upsert-schedule.query';
import { deleteSchedule } from './cron/sql/delete-schedules.query';
import { listSchedules } from './cron/sql/list-schedules.query';
import { toJobSchedule } from './cron/sql/schedule-columns';
import { PruneOptions, PruneReport } from './interfaces/prune-options.interface';
import { checkPruneOptions } from './validation/prune-options.checks';
import { pruneInBatches } from './maintenance/prune-in-batches';
import { StatsOptions } from './interfaces/stats-options.interface';
import { JobStatsReader } from './stats/job-stats.reader';
import { toJobQueueStats } from './stats/job-queue-stats.builder';
import { JobTypePauses } from './worker/job-type-pauses';
import { JobQueueStats } from './stats/job-queue-stats.types';
import { checkManager, isLostRace, LOST_RACE_RETRIES, queueDatabase } from './queue/queue-database';
import { AmbientTransaction } from './queue/ambient-transaction';
import { JOB_OPTION_KEYS, toBatchInsertRows, toJobInsertRow } from './queue/job-insert-rows';
import { enqueueRows } from './queue/enqueue-rows';
import { JobHandlerRegistry } from './discovery/job-handler.registry';
import { ResolvedRetention } from './options/resolved-options';
import { WaitForJobOptions } from './interfaces/job-event.interface';
import { JobEventStream } from './events/job-event-stream';
import { JobLogEntry, JobLogReadOptions } from './interfaces/job-log-entry.interface';
import { readJobLog } from './sql/job-log.query';
import { JobWaits } from './events/job-waits';
import { jobEvent } from './events/job-event-payload';
import { JobQueueInstruments } from './instrumentation/job-queue-instruments';
import { JobListPage, ListJobsQuery } from './interfaces/list-jobs.interface';
import { checkListJobsQuery } from './validation/list-jobs.checks';
import { encodeJobListCursor } from './validation/job-list-cursor';
import { listJobRows } from './sql/list-jobs.query';
import { runSchedule, scheduleJobType } from './cron/sql/run-schedule.query';
import { RedriveOptions, RedriveReport } from './interfaces/redrive-options.interface';
import { checkRedriveOptions } from './validation/redrive-options.checks';
import { redriveInBatches } from './queue/redrive-in-batches';
import { callerUniqueKey, isUniqueKeyTaken } from './sql/unique-keys.sql';
import { findHolderOfStoredKey } from './sql/find-unique-key-holders.query';
import { checkDtoInput } from './queue/job-dto';
import { FlowDefinition, FlowResult } from './interfaces/flow.interface';
import {
  checkDependentOptions,
  checkDependsOn,
  checkPolicy,
  toFlowGraph,
} from './queue/flow-graph';
import { enqueueDependent } from './queue/enqueue-dependent';
import { insertFlowJobs } from './sql/insert-flow-jobs.query';
import { cancelFlowRows } from './sql/cancel-job.query';
import { flowJobRows } from './sql/flow-jobs.query';
import { checkFlowId } from './validation/job-input.checks';
import {
  JobDataOf,
  JobFor,
  JobOfType,
  JobResultOf,
  JobTypes,
  TypedEnqueueManyItem,
  UntypedOnly,
} from './interfaces/job-types.interface';

const WRITE_OPTION_KEYS = ['manager'] as const;
const STATS_OPTION_KEYS = ['maxAgeMs'] as const;
const WAIT_OPTION_KEYS = ['timeoutMs', 'signal'] as const;
const JOB_LOG_READ_KEYS = ['after', 'limit'] as const;
/** The page `jobEvents` returns: its default and largest size. */
const DEFAULT_JOB_LOG_PAGE = 100;
const MAX_JOB_LOG_PAGE = 1_000;

/**
 * The producer and management API: enqueue jobs, read them, report progress, cancel and retry.
 * Every write is one statement; with `manager` it joins the caller's transaction.
 *
 * @publicApi
 */
@Injectable()
export class QueueService {
  private statsReader: JobStatsReader | undefined;
  /**
   * This process's worker, told of a pause made here (see `pause`). Injected as a property, so
   * that the constructor names no internal type; unset when the service is constructed by hand
   * (a script with a DataSource of its own has no worker to tell).
   */
  @Inject(JobTypePauses) private readonly pauses: JobTypePauses | undefined;
  /** This process's job events (cancel and progress made here are its own), like `pauses`. */
  @Inject(JobEventStream) private readonly events: JobEventStream | undefined;
  /** The waits of `waitForJob`, like `pauses`. */
  @Inject(JobWaits) private readonly waits: JobWaits | undefined;
  /** This process's handlers, for their retention (see `retentionOf`), like `pauses`. */
  @Inject(JobHandlerRegistry) private readonly handlers: JobHandlerRegistry | undefined;
  /** The queue's clock, moved only by the testing kit (see `QueueClock`), like `pauses`. */
  @Inject(QueueClock) private readonly clock: QueueClock | undefined;
  /** This process's instruments (metrics, tracing, `context`), like `pauses`. */
  @Inject(JobQueueInstruments) private readonly instruments: JobQueueInstruments | undefined;
  /** The app's ambient transaction (`transactionHost`), which enqueues join, like `pauses`. */
  @Inject(AmbientTransaction) private readonly ambient: AmbientTransaction | undefined;

  /** @internal Nest's injector makes it: inject `QueueService`, do not construct it. */
  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
  ) {}

  /**
   * Adds one job. With `uniqueKey`, returns the job that holds the key instead of adding
   * another (and with `debounceMs`, the holder it replaced); `enqueueWithOutcome` says which.
   */
  enqueue<K extends keyof JobTypes>(
    jobType: K,
    data: JobDataOf<K>,
    opts?: EnqueueOptions,
  ): Promise<JobOfType<K>>;
  /** As above, for an app without `JobTypes`: any type name, with data of any type `T`. */
  enqueue<T>(jobType: UntypedOnly<string>, data: T, opts?: EnqueueOptions): Promise<Job<T>>;
  async enqueue(jobType: string, data: unknown, opts: EnqueueOptions = {}): Promise<Job> {
    return (await this.enqueueWithOutcome(jobType as UntypedOnly<string>, data, opts)).job;
  }

  /**
   * `enqueue`, saying what it did: `created` the job, `replaced` the data and `run_at` of the
   * key's holder that had not started (`debounceMs`), or `skipped` it for the job that holds the
   * key (`uniqueKey`, `throttleMs`), which it returns.
   */
  enqueueWithOutcome<K extends keyof JobTypes>(
    jobType: K,
    data: JobDataOf<K>,
    opts?: EnqueueOptions,
  ): Promise<EnqueueResult<JobDataOf<K>, JobResultOf<K>>>;
  /** As above, for an app without `JobTypes`: any type name, with data of any type `T`. */
  enqueueWithOutcome<T>(
    jobType: UntypedOnly<string>,
    data: T,
    opts?: EnqueueOptions,
  ): Promise<EnqueueResult<T>>;
  async enqueueWithOutcome(
    jobType: string,
    data: unknown,
    opts: EnqueueOptions = {},
  ): Promise<EnqueueResult> {
    const { manager, dto, dependsOn, onDependencyFailure, ...jobOptions } = jobInput.plainObject(
      'options',
      opts,
    ) as EnqueueOptions;
    // `type` and `data` are arguments here, not options: refuse them instead of dropping them.
    jobInput.knownKeys(jobOptions, JOB_OPTION_KEYS);
    const target = checkManager(manager) ?? this.ambient?.manager();
    const item = { ...jobOptions, type: jobType, data };
    if (dependsOn === undefined && onDependencyFailure !== undefined) {
      jobInput.fail('onDependencyFailure', onDependencyFailure, 'dependsOn beside it');
    }
    const dependencies = dependsOn === undefined ? undefined : checkDependsOn(dependsOn);
    if (dependencies) checkDependentOptions(jobOptions as Record<string, unknown>);
    const policy = checkPolicy('onDependencyFailure', onDependencyFailure);
    const row = toJobInsertRow('', item, this.options.maxPayloadBytes, this.retentionOf);
    if (dto !== undefined) await checkDtoInput(dto, data);
    if (dependencies) {
      const [result] = await this.instrumented([row], (rows, now) =>
        this.inTransaction(target, async (db) => [
          {
            job: await enqueueDependent(
              db,
              this.options.schema,
              rows[0],
              dependencies,
              policy,
              now,
            ),
            outcome: 'created',
          },
        ]),
      );
      return result;
    }
    const [result] = await this.insertRows(this.db(target), [row]);
    return result;
  }

  /**
   * Adds many jobs in one statement; the result is in the input's order. At most `maxBatchSize`
   * jobs and `maxBatchBytes` of `data` per call. Jobs of one batch that share a `uniqueKey` must
   * share its other uniqueness options; each then is what one `enqueue` after another would be.
   */
  enqueueMany<K extends keyof JobTypes>(
    items: TypedEnqueueManyItem<K>[],
    opts?: WriteOptions,
  ): Promise<JobOfType<K>[]>;
  /** As above, for an app without `JobTypes`: any type name, with data of any type `T`. */
  enqueueMany<T>(items: UntypedOnly<EnqueueManyItem<T>[]>, opts?: WriteOptions): Promise<Job<T>[]>;
  async enqueueMany(items: EnqueueManyItem[], opts: WriteOptions = {}): Promise<Job[]> {
    const results = await this.enqueueManyWithOutcome(
      items as UntypedOnly<EnqueueManyItem[]>,
      opts,
    );
    return results.map((result) => result.job);
  }

  /** `enqueueMany`, saying what it did with each job, as `enqueueWithOutcome` does. */
  enqueueManyWithOutcome<K extends keyof JobTypes>(
    items: TypedEnqueueManyItem<K>[],
    opts?: WriteOptions,
  ): Promise<EnqueueResult<JobDataOf<K>, JobResultOf<K>>[]>;
  /** As above, for an app without `JobTypes`: any type name, with data of any type `T`. */
  enqueueManyWithOutcome<T>(
    items: UntypedOnly<EnqueueManyItem<T>[]>,
    opts?: WriteOptions,
  ): Promise<EnqueueResult<T>[]>;
  async enqueueManyWithOutcome(
    items: EnqueueManyItem[],
    opts: WriteOptions = {},
  ): Promise<EnqueueResult[]> {
    if (!Array.isArray(items)) {
      throw new InvalidJobInputError(BATCH_NOT_AN_ARRAY(items), 'jobs', items);
    }
    jobInput.knownKeys(jobInput.plainObject('options', opts), WRITE_OPTION_KEYS);
    const db = this.db(checkManager(opts.manager) ?? this.ambient?.manager());
    const rows = toBatchInsertRows(items, this.options, this.retentionOf);
    if (rows.length === 0) return [];
    return this.insertRows(db, rows);
  }

  /**
   * Enqueues `rows` at the queue's clock (moved only in tests): their delays count from it. The
   * instruments see the call, and what they capture is each job's `meta`.
   */
  private insertRows(db: Queryable, rows: JobInsertRow[]): Promise<EnqueueResult[]> {
    return this.instrumented(rows, (withMeta, now) =>
      enqueueRows(db, this.options.schema, withMeta, now),
    );
  }

  /**
   * Runs `insert` with `rows` and the queue's clock; the instruments see the call, and what they
   * capture is each job's `meta`.
   */
  private instrumented(
    rows: JobInsertRow[],
    insert: (rows: JobInsertRow[], now: Date | null) => Promise<EnqueueResult[]>,
  ): Promise<EnqueueResult[]> {
    const now = this.clock?.now() ?? null;
    if (!this.instruments?.active) return insert(rows, now);
    return this.instruments.enqueue(
      rows.map((row) => row.jobType),
      (metaJson) =>
        insert(metaJson === null ? rows : rows.map((row) => ({ ...row, metaJson })), now),
      (results) => results.flatMap((result) => (result.outcome === 'created' ? [result.job] : [])),
    );
  }

  /**
   * `fn` in the caller's transaction (`target`, a manager), else in one of its own: statements
   * that must commit together, or not at all. Its own is run again, whole, when it lost a race
   * (a deadlock or serialization failure rolled it all back), up to `LOST_RACE_RETRIES` times;
   * the caller's is the caller's to run again.
   */
  private async inTransaction<R>(
    target: Queryable | undefined,
    fn: (db: Queryable) => Promise<R>,
  ): Promise<R> {
    if (target) return fn(this.db(target));
    for (let retries = 0; ; retries++) {
      try {
        return await this.dataSource.transaction((manager) => fn(this.db(manager)));
      } catch (error) {
        if (retries === LOST_RACE_RETRIES || !isLostRace(error)) throw error;
      }
    }
  }

  /**
   * Enqueues a flow, every job and dependency in one statement: a graph of named steps
   * (`{ steps: [{ name, type, data, dependsOn: ['other step'] }] }`) or a tree whose nodes wait
   * for their `children`. A job with dependencies is `blocked` until they have finished. Returns
   * the flow's id (for `cancelFlow`) and its jobs. A cycle, a dependency on no step of the flow,
   * a repeated name, bad job options, more than `maxBatchSize` steps or `maxBatchBytes` of data
   * are refused (`InvalidJobInputError`, naming the field) before anything is written.
   */
  async flow(definition: FlowDefinition, opts: WriteOptions = {}): Promise<FlowResult> {
    jobInput.knownKeys(jobInput.plainObject('options', opts), WRITE_OPTION_KEYS);
    const db = this.db(checkManager(opts.manager) ?? this.ambient?.manager());
    const graph = toFlowGraph(definition, this.options, this.retentionOf);
    const flowId = randomUUID();
    const results = await this.instrumented(
      graph.jobs.map((job) => job.row),
      async (rows, now) => {
        const withRows = graph.jobs.map((job, i) => ({ ...job, row: rows[i] }));
        const jobs = await insertFlowJobs(
          db,
          this.options.schema,
          withRows,
          graph.edges,
          flowId,
          now,
        );
        return jobs.map((job) => ({ job, outcome: 'created' as const }));
      },
    );
    const jobs = results.map((result) => result.job);
    return {
      flowId,
      jobs,
      steps: Object.fromEntries(graph.names.map((name, i) => [name, jobs[i]])),
    };
  }

  /**
   * The jobs of a flow (`job.flowId`), in the order `flow()` made them: those retention has
   * kept, so `[]` for an unknown flow or one pruned whole.
   */
  async getFlow(flowId: string): Promise<Job[]> {
    const id = checkFlowId('flowId', flowId);
    return (await flowJobRows(this.db(), this.options.schema, id)).map(toJob);
  }

  /**
   * Cancels every job of the flow that has not finished (as `cancel` does one: a running one's
   * `ctx.signal` aborts) and returns them; the finished ones stay as they are. A flow with
   * nothing left to cancel returns `[]`.
   */
  async cancelFlow(flowId: string): Promise<Job[]> {
    const id = checkFlowId('flowId', flowId);
    const rows = await cancelFlowRows(this.db(), this.options.schema, id, this.notifyOrigin());
    const jobs = rows.map(toJob);
    this.events?.emit(jobs.map((job) => jobEvent('cancelled', job)));
    for (const job of jobs) this.instruments?.cancelled(job.jobType);
    return jobs;
  }

  /**
   * How long this process keeps a type's finished jobs: its handler's retention, else the
   * module's. A uniqueness period that counts finished jobs must not outlast it.
   */
  private readonly retentionOf = (jobType: string): ResolvedRetention =>
    this.handlers?.get(jobType)?.options.retention ?? this.options.retention;

  /**
   * The job with this id; throws `JobNotFoundError` when there is none. `T` is its data type, or
   * a type name of the app's `JobTypes` for that type's job: `getJob<'report_generation'>(id)`.
   * The type is not checked against the row: name the type the id was enqueued as.
   */
  async getJob<T = unknown>(id: string | number): Promise<JobFor<T>> {
    const jobId = checkJobId('id', id);
    const row = await getJobRow(this.db(), this.options.schema, jobId);
    if (!row) throw new JobNotFoundError(id);
    return toJob(row) as JobFor<T>;
  }

  /**
   * A page of jobs, newest first (by id), filtered by any of `id`, `type`, `status` and
   * `uniqueKeyPrefix` (unfinished jobs only); read on with `cursor` set to the page's
   * `nextCursor` (null on the last page). Keyset paging: a page below a cursor is read from
   * where the cursor points, so a deep page costs what the first does, and jobs enqueued during
   * a walk neither repeat nor shift the pages (they are newer than its first page). Listed jobs
   * have every property but `data` and `meta`, which are left undefined (payloads may be large:
   * `getJob` reads one whole). `limit` is 1 to 500, default 50. Throws `InvalidJobInputError`
   * naming the field for a bad filter or `limit`, an unknown key, or a `cursor` that is not a
   * `nextCursor` of this method.
   */
  async listJobs(query: ListJobsQuery = {}): Promise<JobListPage> {
    const checked = checkListJobsQuery(query);
    const rows = await listJobRows(this.db(), this.options.schema, checked);
    const jobs = rows.slice(0, checked.limit).map(toJob);
    const nextCursor =
      rows.length > checked.limit ? encodeJobListCursor(jobs[jobs.length - 1].id) : null;
    return { jobs, nextCursor };
  }

  /**
   * A page of the job's log, oldest first: what the queue did with it, its progress writes and
   * its handler's `ctx.log` lines (`JobLogEntry`). Read on with `after` set to the last entry's
   * id. Throws `JobNotFoundError` when there is no such job (a pruned job's log went with it),
   * `InvalidJobInputError` for a bad `after` or `limit`.
   */
  async jobEvents(id: string | number, options: JobLogReadOptions = {}): Promise<JobLogEntry[]> {
    const jobId = checkJobId('id', id);
    jobInput.knownKeys(jobInput.plainObject('options', options), JOB_LOG_READ_KEYS);
    const after = options.after === undefined ? '0' : checkJobId('after', options.after);
    const limit =
      options.limit === undefined
        ? DEFAULT_JOB_LOG_PAGE
        : jobInput.integer('limit', options.limit, 1, MAX_JOB_LOG_PAGE);
    const entries = await readJobLog(this.db(), this.options.schema, jobId, after, limit);
    if (!entries) throw new JobNotFoundError(id);
    return entries;
  }

  /**
   * Records progress 0..100 (rounded) and, when given, the current stage of an unfinished job.
   * A management call from outside any run: it writes to the job whichever run holds it (a
   * handler's own `ctx.progress` is fenced to its run instead).
   */
  async updateProgress(id: string | number, progress: number, stage?: string): Promise<Job> {
    const jobId = checkJobId('id', id);
    const pct = checkProgress('progress', progress);
    const currentStage = checkStage('stage', stage);
    const row = await updateProgressRow(
      this.db(),
      this.options.schema,
      jobId,
      pct,
      currentStage,
      this.notifyOrigin(),
    );
    if (!row) throw await this.whyNot(jobId, 'given progress');
    const job = toJob(row);
    this.events?.emit([jobEvent('progress', job)]);
    return job;
  }

  /**
   * Cancels an unfinished job: it is `cancelled` from the moment this resolves, whether or not a
   * handler still runs it. A running handler sees `ctx.signal` abort with `JobCancelledError` at
   * once on whichever node runs it (a NOTIFY sent by the same statement; within the worker's
   * `heartbeatIntervalMs` when that worker does not LISTEN). Until its handler gives up, the
   * cancelled run can write nothing: no progress, no result, no error.
   */
  async cancel(id: string | number): Promise<Job> {
    const jobId = checkJobId('id', id);
    const row = await cancelJobRow(this.db(), this.options.schema, jobId, this.notifyOrigin());
    if (!row) throw await this.whyNot(jobId, 'cancelled');
    const job = toJob(row);
    this.events?.emit([jobEvent('cancelled', job)]);
    this.instruments?.cancelled(job.jobType);
    return job;
  }

  /**
   * Runs a failed or cancelled job again, now, with a fresh set of attempts (its attempt limit
   * and backoff stay as its row has them). Accepted at once after `cancel()`, even while the
   * cancelled run's handler has not given up yet: the next claim gives the job a new fencing
   * token, and only the run holding the current one can write anything for the job.
   */
  async retry(id: string | number): Promise<Job> {
    const jobId = checkJobId('id', id);
    let row: JobRow | undefined;
    try {
      row = await retryJobRow(this.db(), this.options.schema, jobId);
    } catch (error) {
      // Another job took the key between this statement's check and its write (two retries of
      // jobs sharing a key, at once): the same conflict as a key taken before.
      if (!isUniqueKeyTaken(error)) throw error;
    }
    if (!row) throw await this.whyNotRetried(jobId);
    return toJob(row);
  }

  /**
   * Puts failed jobs back to `pending`, to run now with a fresh set of attempts, as `retry` does
   * for one, and returns how many it moved: every failed job, or those of `type`, that failed
   * at or after `since`, among `ids`. Batched (at most 1,000 jobs per statement, each its own
   * transaction, in id order, each after the last job the previous one read, so a concurrent
   * redrive or retry holding some jobs never ends it early). A job whose unique key another job
   * holds stays failed (as `retry` refuses it), as do all but the first of failed jobs that
   * share a key; an enqueue taking a key while a batch runs leaves that job failed and the rest
   * moved. With `report: true`, resolves with a `RedriveReport` instead of the number moved.
   * Throws `InvalidJobInputError` naming the field for a bad option.
   */
  async redrive(opts?: RedriveOptions & { report?: false }): Promise<number>;
  /** `redrive()` with `report: true`: what it moved, and what it left failed and why. */
  async redrive(opts: RedriveOptions & { report: true }): Promise<RedriveReport>;
  /** `redrive()` with `report` known only at run time: the number, or the report. */
  async redrive(opts?: RedriveOptions): Promise<number | RedriveReport>;
  async redrive(opts: RedriveOptions = {}): Promise<number | RedriveReport> {
    const { report, ...criteria } = checkRedriveOptions(opts);
    const totals = await redriveInBatches(this.db(), this.options.schema, criteria);
    return report
      ? {
          moved: totals.moved,
          skipped: { uniqueKey: totals.skippedForKey, locked: totals.skippedLocked },
        }
      : totals.moved;
  }

  /**
   * Counts of jobs by type and status (every status present, zeros included), from a snapshot
   * at most `maxAgeMs` old. Worker nodes refresh the snapshot in the background (every
   * `statsIntervalMs`, at least ten times as long as a count takes); without `maxAgeMs` it is
   * fresh enough for three such refreshes. When the snapshot is older, this counts the table
   * itself and stores the result as the new snapshot; concurrent calls in this process share
   * one count. `{ maxAgeMs: 0 }`: exact counts, taken after this call. Whether each type is
   * paused is read at every call (a small table); a paused type with no jobs is listed too, with
   * zeros.
   */
  async stats(opts: StatsOptions = {}): Promise<JobQueueStats> {
    jobInput.knownKeys(jobInput.plainObject('options', opts), STATS_OPTION_KEYS);
    const maxAgeMs =
      opts.maxAgeMs === undefined ? undefined : checkInteger('maxAgeMs', opts.maxAgeMs, 0);
    this.statsReader ??= new JobStatsReader(
      this.db(),
      this.options.schema,
      this.options.statsIntervalMs,
    );
    const [counts, paused] = await Promise.all([
      this.statsReader.counts(maxAgeMs),
      this.statsReader.pausedTypes(),
    ]);
    return toJobQueueStats(counts, paused);
  }

  /** Claimed or running jobs whose row has not changed for `olderThanMs` (oldest first). */
  async findStale(olderThanMs: number): Promise<Job[]> {
    const ms = checkInteger('olderThanMs', olderThanMs, 0);
    return (await findStaleJobRows(this.db(), this.options.schema, ms)).map(toJob);
  }

  /**
   * Pauses a job type on every node: from the moment this resolves, no worker claims its jobs
   * (a claim already under way may still take some), and this process's worker has handed back
   * the jobs of the type it had claimed and not started (prefetched); other nodes hand theirs
   * back when the notification reaches them, or at their next heartbeat with LISTEN off. Its
   * running jobs finish; its jobs wait, and can still be enqueued, cancelled or retried. Kept in the database (`job_types`), so it
   * survives restarts and deploys. Pausing a paused type changes nothing; a type needs no
   * handler or jobs to be paused. `stats()` shows it.
   */
  async pause(jobType: string): Promise<void> {
    const type = checkJobType('type', jobType);
    await pauseJobType(this.db(), this.options.schema, type);
    await this.pauses?.paused(type);
  }

  /**
   * Resumes a paused job type: workers claim its jobs again, and idle ones are woken at once on
   * every node that LISTENs (others at their next poll). Resuming a type that is not paused
   * changes nothing.
   */
  async resume(jobType: string): Promise<void> {
    const type = checkJobType('type', jobType);
    await resumeJobType(this.db(), this.options.schema, type);
  }

  /**
   * Creates or replaces the recurring job `name`: each fire time of `cron` (5 fields, or 6 with
   * seconds first; read in `opts.timezone`, default UTC) enqueues one job of `jobType` with `data`
   * and `runAt` at that fire time, once across all nodes. Any running worker fires it, whatever
   * handlers it has. Replacing with the same cron and zone keeps its next fire time (calling this
   * at every boot skips and repeats nothing); a new cron or zone starts at its first fire time
   * after the database's now (not this process's clock; the testing kit's, when it moved it). Throws `InvalidJobInputError` naming the
   * argument (`cron`, `timezone` …) for a bad one, and for a `name` that a `@JobHandler`'s cron
   * owns.
   */
  async schedule<T>(
    name: string,
    cron: string,
    jobType: string,
    data: T,
    opts: ScheduleOptions = {},
  ): Promise<JobSchedule<T>> {
    const checked = checkedSchedule(name, cron, jobType, data, opts, this.options.maxPayloadBytes);
    const row = withFirstFireAt(checked, this.clock?.now() ?? (await databaseNow(this.db())));
    const written = await upsertSchedule(this.db(), this.options.schema, row);
    if (!written) throw new InvalidJobInputError(SCHEDULE_OWNED_BY_HANDLER(name), 'name', name);
    return toJobSchedule(written) as JobSchedule<T>;
  }

  /**
   * Deletes the schedule `name`; resolves whether there was one. Jobs it already enqueued stay.
   * A handler's schedule comes back when a worker with that handler boots: remove its `cron`.
   */
  async unschedule(name: string): Promise<boolean> {
    return deleteSchedule(this.db(), this.options.schema, checkScheduleName('name', name));
  }

  /**
   * Enqueues the job of the schedule `name` now, as a fire of it would (its type, data, priority
   * and attempts, due now; no unique key, as a fire has none), and resolves with it. The
   * schedule's next and last fire times stay as they are: its next fire enqueues its job as
   * well. Throws `ScheduleNotFoundError` when no schedule has this name.
   */
  async runSchedule(name: string): Promise<Job> {
    const scheduleName = checkScheduleName('name', name);
    const db = this.db();
    const now = this.clock?.now() ?? null;
    const insert = async (metaJson: string | null) => {
      const row = await runSchedule(db, this.options.schema, scheduleName, now, metaJson);
      if (!row) throw new ScheduleNotFoundError(scheduleName);
      return toJob(row);
    };
    if (!this.instruments?.active) return insert(null);
    // The instruments are told the job's type before the insert, as at any enqueue.
    const jobType = await scheduleJobType(db, this.options.schema, scheduleName);
    if (jobType === undefined) throw new ScheduleNotFoundError(scheduleName);
    return this.instruments.enqueue([jobType], insert, (job) => [job]);
  }

  /** Every schedule, by name, with its next and last fire times. */
  async schedules(): Promise<JobSchedule[]> {
    return (await listSchedules(this.db(), this.options.schema)).map(toJobSchedule);
  }

  /**
   * Deletes finished jobs now, for an operator's one-off clean-up, and returns how many (with
   * `report: true`, a `PruneReport`: also what it kept, and why). Without `olderThanMs`, each
   * type's retention applies as the pruner applies it (a type kept forever stays); with it, every
   * finished job older than that goes. Paged like the pruner (at most 1,000 rows per statement,
   * each its own transaction, each bounded by `databaseTimeoutMs`, each after the last, past the
   * jobs kept for their unfinished dependants); it does not wait for the pruner's lock
   * (`SKIP LOCKED` keeps the two apart). Never deletes an unfinished job.
   */
  async prune(opts?: PruneOptions & { report?: false }): Promise<number>;
  /** `prune()` with `report: true`: what it deleted, and what it kept and why. */
  async prune(opts: PruneOptions & { report: true }): Promise<PruneReport>;
  /** `prune()` with `report` known only at run time: the number, or the report. */
  async prune(opts?: PruneOptions): Promise<number | PruneReport>;
  async prune(opts: PruneOptions = {}): Promise<number | PruneReport> {
    const { report, ...checked } = checkPruneOptions(opts);
    const totals = await pruneInBatches(
      this.db(),
      this.options.schema,
      { defaults: this.options.retention, ...checked },
      { lockKey: null, deadline: null },
    );
    return report
      ? { deleted: totals.deleted, kept: { dependants: totals.keptForDependants } }
      : totals.deleted;
  }

  /**
   * Resolves with the job (as `getJob` returns it) once it is finished, whatever its final status
   * (`completed`, `failed`, `cancelled`); at once when it is finished already. Rejects with
   * `JobWaitTimeoutError` after `timeoutMs`, `JobNotFoundError` when no job has this id (or it
   * was pruned while waited on), the signal's reason when `signal` aborts, and
   * `JobQueueUnavailableError` when the application shuts down first. The job is left as it is
   * in every case.
   *
   * It hears of the finish by the job's events (this process's own, and other processes' through
   * LISTEN while `events.remote` is on), and reads the job again every
   * `events.waitPollIntervalMs` while this process does not LISTEN. Any number of waits share
   * one LISTEN connection and one poll, and leave nothing behind once settled.
   */
  async waitForJob<T = unknown>(id: string | number, opts: WaitForJobOptions): Promise<JobFor<T>> {
    const jobId = checkJobId('id', id);
    const options = jobInput.plainObject('options', opts);
    jobInput.knownKeys(options, WAIT_OPTION_KEYS);
    const timeoutMs = jobInput.integer('timeoutMs', options.timeoutMs, 1);
    const signal = options.signal;
    if (signal !== undefined && !isAbortSignal(signal)) {
      jobInput.fail('signal', signal, 'an AbortSignal');
    }
    if (!this.waits)
      throw new Error('waitForJob needs the JobQueueModule (QueueService made by Nest)');
    return (await this.waits.wait(
      jobId,
      timeoutMs,
      signal as AbortSignal | undefined,
    )) as JobFor<T>;
  }

  /** This process's workerId when its statements notify their events (`events.remote`). */
  private notifyOrigin(): string | undefined {
    return this.options.events.remote ? this.options.workerId : undefined;
  }

  /** Where a call's statements go: `manager`, else the data source (see `queueDatabase`). */
  private db(manager?: Queryable): Queryable {
    return queueDatabase(manager ?? this.dataSource, this.options.databaseTimeoutMs, {
      retryLostRaces: manager === undefined,
    });
  }

  /**
   * Why a retry matched no row: no such job, not failed or cancelled, or another job holds its
   * unique key (named, with that job's id and status).
   */
  private async whyNotRetried(jobId: string): Promise<Error> {
    const row = await getJobRow(this.db(), this.options.schema, jobId);
    if (!row) return new JobNotFoundError(jobId);
    const status = row.status as JobStatus;
    const retryable = status === JobStatus.Failed || status === JobStatus.Cancelled;
    const holder =
      retryable && row.unique_key
        ? await findHolderOfStoredKey(this.db(), this.options.schema, String(row.unique_key), jobId)
        : undefined;
    return new JobStateConflictError(
      jobId,
      status,
      'retried',
      holder && {
        uniqueKey: callerUniqueKey(row.unique_key as string),
        jobId: String(holder.id),
        status: holder.status as JobStatus,
      },
    );
  }

  /** Why a write that targets one job matched no row: no such job, or not in a state for it. */
  private async whyNot(jobId: string, action: string): Promise<Error> {
    const row = await getJobRow(this.db(), this.options.schema, jobId);
    if (!row) return new JobNotFoundError(jobId);
    return new JobStateConflictError(jobId, row.status as JobStatus, action);
  }
}

function isAbortSignal(value: unknown): value is AbortSignal {
  const signal = value as Partial<AbortSignal> | null;
  return (
    typeof signal === 'object' &&
    signal !== null &&
    typeof signal.aborted === 'boolean' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function'
  );
}

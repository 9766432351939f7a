import { JobContextHooks } from './job-context-hooks.interface';
import { BackoffOptions } from './backoff-options.interface';
import { RetentionOptions } from './retention-options.interface';
import { JobEventsOptions } from './job-events-options.interface';

/** @publicApi */
export interface JobQueueWorkerOptions {
  /** Jobs this process runs at once, over all types. Default: 10. */
  concurrency?: number;
  /** Most jobs claimed in one round trip (never more than the free slots). Default: `concurrency`. */
  batchSize?: number;
  /**
   * Jobs claimed ahead of free slots, held in this process until a slot frees (like
   * graphile-worker's local queue): a busy worker of short jobs claims in bigger, fewer round
   * trips. A held job is already leased to this worker (status `running`, `startedAt` its claim
   * time), no other node can take it, and it runs after the jobs ahead of it here; cancel drops
   * it, shutdown hands it back; one not started within max(1 s, 2 × its type's median run time)
   * is handed back. `'auto'` sizes it from this worker's own figures: the jobs its slots finish
   * in four claim round trips (4 × concurrency × the median claim round trip / the median run
   * time), at most 4 × `concurrency` or 500, the more; none until runs have been timed, and none
   * for jobs slower than four claims. A number fixes it (at most 10,000; 0: claim only for free
   * slots). Default: `'auto'`.
   */
  prefetch?: number | 'auto';
  /** How often an idle worker polls; `LISTEN` wakes it sooner. Default: 1000. */
  pollIntervalMs?: number;
  /** Claim only these types. Default: every type this process has a `@JobHandler` for. */
  jobTypes?: string[];
  /**
   * Wake on `LISTEN` as soon as a job is inserted. Needs a session connection: turn it off when the
   * pool sits behind PgBouncer in transaction mode (polling still finds every job). Default: true.
   */
  listen?: boolean;
  /**
   * Start claiming once the application has bootstrapped. `false`: the worker waits until the app
   * calls `JobWorker.start()` (say, after a warm-up, or only on some nodes). Default: true.
   */
  autoStart?: boolean;
}

/**
 * Options of `JobQueueModule.forRoot` / `forRootAsync`. Unknown keys and out-of-range values fail
 * at boot with an `InvalidJobQueueOptionsError` naming the option.
 *
 * @publicApi
 */
export interface JobQueueModuleOptions {
  /** Name of the app's TypeORM data source to use. Default: the default data source. */
  dataSource?: string;
  /**
   * The PostgreSQL schema of the queue's table and functions, made by its migrations (for a schema
   * other than the default, run `jobQueueMigrationsFor({ schema })`). Every statement names it;
   * its LISTEN channels (`<schema>_jobs_inserted`, `<schema>_job_cancelled`) and its reaper's
   * advisory lock are its own, so queues in two schemas of one database never touch each other's
   * jobs. Lowercase letters, digits and `_`, at most 49 characters; not `public`. Default:
   * `'job_queue'`.
   */
  schema?: string;
  /** How this process identifies itself in `jobs.worker_id`. Default: `host:pid:random`. */
  workerId?: string;
  /** Worker settings, or `false` for an enqueue-only process. Default: `{}` (a worker with defaults). */
  worker?: false | JobQueueWorkerOptions;
  /** A running job whose heartbeat is older than this is taken back by the reaper. Default: 60000. */
  staleAfterMs?: number;
  /** How often a worker refreshes the heartbeat of its jobs; below `staleAfterMs`. Default: 10000. */
  heartbeatIntervalMs?: number;
  /** How often the reaper looks for stale jobs (and stuck ones). Default: 15000. */
  reaperIntervalMs?: number;
  /**
   * A job `waiting` this long for its concurrency key while no job of the key runs and no rate
   * window will release it is moved back to `pending` by the reaper's pass, with a warning per
   * type: a safety net for a release the queue missed, and what releases them once a type's
   * handler is gone from every node (its stored limits stay until a worker with it boots).
   * `false`: never. Default: 300000.
   */
  stuckAfterMs?: number | false;
  /**
   * How often each worker's stager moves `scheduled` jobs that are due to `pending`: a delayed
   * job, or a retry after its backoff, starts at most about this long after its `run_at`.
   * Default: 1000.
   */
  stagerIntervalMs?: number;
  /**
   * How often each worker checks whether the snapshot of `stats()` counts is due for a refresh.
   * A refresh counts the whole table, on one node at a time, and waits at least this long, and
   * at least ten times as long as the last count took, after the previous one. Default: 5000.
   */
  statsIntervalMs?: number;
  /** On shutdown, how long running handlers may take before they are aborted. Default: 10000. */
  shutdownTimeoutMs?: number;
  /** Attempts of a job whose handler and enqueue name none. Default: 3. */
  defaultMaxAttempts?: number;
  /** Retry delays of a job whose handler names none. */
  backoff?: BackoffOptions;
  /** Largest `data` accepted, in bytes of its JSON. Default: 1048576 (1 MB). */
  maxPayloadBytes?: number;
  /**
   * Largest handler result stored, in bytes of its JSON (UTF-8). A larger result, or one jsonb
   * cannot hold (NUL, an unpaired surrogate, a BigInt, a cycle), fails that attempt with a
   * `last_error` naming the problem, and the job is retried like after any failure. At most
   * 268435455 (jsonb's limit). Default: 1048576 (1 MB).
   */
  maxResultBytes?: number;
  /**
   * Largest `meta` stored with a job (what the `context` hooks and instruments such as tracing
   * capture at enqueue), in bytes of its JSON; a larger one is refused at enqueue with an
   * `InvalidJobInputError` naming `meta`. Default: 8192 (8 KiB).
   */
  maxMetaBytes?: number;
  /**
   * Hooks that capture per-job context at enqueue into the job's `meta` and restore it around
   * each run (see `JobContextHooks`). Default: none.
   */
  context?: JobContextHooks;
  /**
   * `enqueue` and `enqueueMany` without `manager` join the active transaction of the app's
   * `TransactionHost` (`@nestjs-cls/transactional` with its TypeORM adapter): `true` for the
   * default one, a connection name for a named one. Needs both packages, and the host's data
   * source must be the queue's; the boot fails otherwise. Outside a transaction, and with an
   * explicit `manager`, nothing changes. Default: `false`.
   */
  transactionHost?: boolean | string;
  /**
   * Most jobs one `enqueueMany` call takes; more is refused with an `InvalidJobInputError` (field
   * `jobs`) before any is looked at. Split bigger batches into several calls (and, to keep them
   * all or none, one transaction through `manager`). Default: 10000.
   */
  maxBatchSize?: number;
  /**
   * Most bytes of `data` JSON (all jobs together, UTF-8) one `enqueueMany` call takes; past it
   * the call is refused (`InvalidJobInputError`, field `jobs`) before the rest is serialised.
   * The batch goes to PostgreSQL as one jsonb document, which holds at most 256 MB and can take
   * up to 6 times the bytes of its JSON for payloads of many small numbers: above the default,
   * such payloads may be refused by the database. At most 268435455. Default: 33554432 (32 MB).
   */
  maxBatchBytes?: number;
  /** At most one progress write per job in this period; the last value always lands. Default: 250. */
  progressThrottleMs?: number;
  /**
   * Longest wait for the database in a `QueueService` call, per statement; past it the call
   * rejects with `JobQueueUnavailableError` (so do a refused or dropped connection). `0`: wait as
   * long as the driver does. Default: 10000.
   *
   * The timeout gives up waiting; it does not cancel the statement. An INSERT that reached the
   * server may still commit after the caller saw the error, so a retried `enqueue` can add the
   * job twice: give it a `uniqueKey` when that matters. Inside the caller's transaction
   * (`manager`), the job exists only if that transaction commits.
   */
  databaseTimeoutMs?: number;
  /**
   * How long finished jobs are kept before a worker's pruner deletes them, by status; `false`
   * keeps every finished job forever. A `@JobHandler`'s own `retention` is merged over this for
   * its type and stored in the database for every node; this applies to types no handler has
   * stored one for. Default: `{ completedMs: 86400000, failedMs: 604800000, cancelledMs:
   * 604800000 }` (1 day, 7 days, 7 days).
   */
  retention?: false | RetentionOptions;
  /**
   * How often each worker's pruner deletes finished jobs past their retention (one node at a
   * time, in batches of at most 1,000 rows per statement). Default: 60000.
   */
  retentionIntervalMs?: number;
  /**
   * Job events (`@OnJobEvent`) and `waitForJob`: whether other processes' events arrive by
   * LISTEN/NOTIFY, the listeners' buffer, the poll of waits without LISTEN. Default: `{}`.
   */
  events?: JobEventsOptions;
}

/** Metadata key under which `@JobHandler` records its type and options. */
export const JOB_HANDLER_METADATA = 'job-queue:handler';

/**
 * The schema the queue's objects live in unless the `schema` option names another: a schema of
 * the queue's own, so nothing it runs resolves a name in `public` (see sql/queue-schema.ts).
 */
export const DEFAULT_SCHEMA = 'job_queue';
/**
 * What a `schema` option may be: a lowercase identifier that needs no quoting, at most 49
 * characters so that the LISTEN channels named after it (`<schema>_jobs_inserted`,
 * `<schema>_job_cancelled`) fit PostgreSQL's 63-byte identifiers.
 */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,48}$/;

/** Token of the resolved, validated options (`ResolvedJobQueueOptions`). */
export const RESOLVED_JOB_QUEUE_OPTIONS = Symbol('RESOLVED_JOB_QUEUE_OPTIONS');
/** Token of the `DataSource` the queue uses (the app's own, by name). */
export const JOB_QUEUE_DATA_SOURCE = Symbol('JOB_QUEUE_DATA_SOURCE');
/**
 * Token of the `SchedulerRegistry` the worker's intervals go in: the host's when it imports
 * `ScheduleModule.forRoot()`, else one of the queue's own.
 */
export const JOB_QUEUE_SCHEDULER = Symbol('JOB_QUEUE_SCHEDULER');

export const DEFAULT_PRIORITY = 100;
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_CONCURRENCY = 10;
/** Most jobs a worker may hold ahead of free slots (`worker.prefetch`). */
export const MAX_PREFETCH = 10_000;
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_STALE_AFTER_MS = 60_000;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;
export const DEFAULT_REAPER_INTERVAL_MS = 15_000;
export const DEFAULT_STAGER_INTERVAL_MS = 1_000;
/** How often each worker looks for cron schedules that are due (see maintenance/cron-scheduler.ts). */
export const CRON_TICK_MS = 1_000;
/** How often each worker's pruner deletes finished jobs past their retention. */
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1_000;
/** How long finished jobs are kept by default: completed 1 day, failed and cancelled 7 days. */
export const DEFAULT_COMPLETED_RETENTION_MS = DAY_MS;
export const DEFAULT_FAILED_RETENTION_MS = 7 * DAY_MS;
export const DEFAULT_CANCELLED_RETENTION_MS = 7 * DAY_MS;
/**
 * The longest retention or `prune({ olderThanMs })`: 1,000 years. `now() - retention` must stay
 * within timestamptz's range (from 4714 BC), and a bigint column holds it.
 */
export const MAX_RETENTION_MS = 1_000 * 365 * DAY_MS;
export const DEFAULT_STATS_INTERVAL_MS = 5_000;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
export const DEFAULT_PROGRESS_THROTTLE_MS = 250;
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;
export const DEFAULT_COMPLETION_FLUSH_MS = 5;
export const DEFAULT_COMPLETION_BATCH_SIZE = 500;
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_BATCH_SIZE = 10_000;
/**
 * An `enqueueMany` batch goes to PostgreSQL as one jsonb document, which can hold at most
 * `MAX_BATCH_BYTES_LIMIT` bytes, and jsonb can take up to 6 times the bytes of its JSON text
 * (`[0,0,…]`): 32 MB of data stays below that whatever its shape.
 */
export const DEFAULT_MAX_BATCH_BYTES = 32 * 1024 * 1024;
/** The largest jsonb value PostgreSQL stores (`total size of jsonb … exceeds the maximum`). */
export const MAX_BATCH_BYTES_LIMIT = 256 * 1024 * 1024 - 1;
export const DEFAULT_BACKOFF_BASE_MS = 1_000;
export const DEFAULT_BACKOFF_MAX_MS = 60 * 60 * 1_000;
export const DEFAULT_BACKOFF_JITTER = 0.2;

/** Length limits of the text columns (CHECKs), checked before a write so errors name the field. */
export const MAX_JOB_TYPE_LENGTH = 255;
export const MAX_UNIQUE_KEY_LENGTH = 255;
export const MAX_STAGE_LENGTH = 255;
export const MAX_SCHEDULE_NAME_LENGTH = 255;
export const MAX_CRON_LENGTH = 255;
/** PostgreSQL `integer` bounds: `priority` and `maxAttempts` are stored as integer. */
export const PG_INT_MIN = -2_147_483_648;
export const PG_INT_MAX = 2_147_483_647;

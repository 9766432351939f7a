/** Metadata key under which `@JobHandler` records its type and options. */
export const JOB_HANDLER_METADATA = 'job-queue:handler';
/** Metadata key under which `@OnJobEvent` records its events and options. */
export const JOB_EVENT_METADATA = 'job-queue:job_event';
/** The events `@OnJobEvent` takes: `JobEventName` (interfaces/job-event.interface.ts), as values. */
export const JOB_EVENT_NAMES: readonly string[] = [
  'started',
  'progress',
  'retrying',
  'completed',
  'failed',
  'cancelled',
  'rescued',
  'snoozed',
];

/**
 * The schema the queue's objects live in unless the `schema` option names another: a schema of
 * the queue's own, so nothing it runs resolves a name in `public` (see sql/queue-schema.ts).
 */
export const DEFAULT_SCHEMA = 'job_queue';
/**
 * What a `schema` option may be: a lowercase identifier that needs no quoting, at most 49
 * characters so that the LISTEN channels named after it (`<schema>_jobs_inserted`,
 * `<schema>_job_cancelled`, `<schema>_job_events`) fit PostgreSQL's 63-byte identifiers.
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

// Module and worker options declare their defaults in options/*.table.ts.

export const DEFAULT_PRIORITY = 100;
/**
 * How often `waitForJob` reads its jobs while this process LISTENs for events anyway: a safety
 * net for a notification that never came (a job edited by hand, a LISTEN gap on reconnect is
 * covered by a read at once).
 */
export const WAIT_POLL_WITH_LISTEN_MS = 30_000;
/** Most jobs a worker may hold ahead of free slots (`worker.prefetch`). */
export const MAX_PREFETCH = 10_000;
/** How often each worker looks for cron schedules that are due (see cron/cron-scheduler.ts). */
export const CRON_TICK_MS = 1_000;
export const DAY_MS = 24 * 60 * 60 * 1_000;
/**
 * The longest retention or `prune({ olderThanMs })`: 1,000 years. `now() - retention` must stay
 * within timestamptz's range (from 4714 BC), and a bigint column holds it.
 */
export const MAX_RETENTION_MS = 1_000 * 365 * DAY_MS;
export const DEFAULT_COMPLETION_FLUSH_MS = 5;
export const DEFAULT_COMPLETION_BATCH_SIZE = 500;
/** The largest jsonb value PostgreSQL stores (`total size of jsonb … exceeds the maximum`). */
export const MAX_BATCH_BYTES_LIMIT = 256 * 1024 * 1024 - 1;

/** Length limits of the text columns (CHECKs), checked before a write so errors name the field. */
export const MAX_JOB_TYPE_LENGTH = 255;
export const MAX_UNIQUE_KEY_LENGTH = 255;
/**
 * Between a caller's key and the window folded into it (`uniqueForMs`, `throttleMs`): U+001F,
 * which a caller's key may not hold, so no key can pass for another's window.
 */
export const UNIQUE_WINDOW_SEPARATOR = '\u001f';
export const MAX_CONCURRENCY_KEY_LENGTH = 255;
/** Most characters of a row's message in a job's log (`job_events`), `ctx.log`'s included. */
export const MAX_LOG_MESSAGE_CHARS = 2_000;
export const MAX_STAGE_LENGTH = 255;
export const MAX_SCHEDULE_NAME_LENGTH = 255;
export const MAX_CRON_LENGTH = 255;
/** PostgreSQL `integer` bounds: `priority` and `maxAttempts` are stored as integer. */
export const PG_INT_MIN = -2_147_483_648;
export const PG_INT_MAX = 2_147_483_647;

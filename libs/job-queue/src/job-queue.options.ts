import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_JITTER,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_CONCURRENCY,
  MAX_PREFETCH,
  DEFAULT_DATABASE_TIMEOUT_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_BATCH_SIZE,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_PROGRESS_THROTTLE_MS,
  DEFAULT_REAPER_INTERVAL_MS,
  DEFAULT_RETENTION_INTERVAL_MS,
  DEFAULT_STAGER_INTERVAL_MS,
  DEFAULT_STATS_INTERVAL_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_STALE_AFTER_MS,
  MAX_BATCH_BYTES_LIMIT,
  MAX_JOB_TYPE_LENGTH,
  PG_INT_MAX,
} from './job-queue.constants';
import { INVALID_OPTION, UNKNOWN_OPTION } from './job-queue.messages';
import { InvalidJobQueueOptionsError } from './errors';
import { BackoffOptions } from './interfaces/backoff-options.interface';
import { DEFAULT_RETENTION, resolveRetention, ResolvedRetention } from './retention.options';
import { schemaOption } from './schema-name.validation';
import {
  JobQueueModuleOptions,
  JobQueueWorkerOptions,
} from './interfaces/job-queue-options.interface';

export interface ResolvedBackoff {
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

export interface ResolvedWorkerOptions {
  concurrency: number;
  batchSize: number;
  /** Jobs claimed ahead of free slots and held here (see `JobQueueWorkerOptions.prefetch`). */
  prefetch: number;
  pollIntervalMs: number;
  /** `undefined`: the types of the discovered handlers. */
  jobTypes: string[] | undefined;
  listen: boolean;
  /** `false`: the worker waits for `JobWorker.start()`. */
  autoStart: boolean;
}

/** Every option filled in and checked: what the rest of the library reads. */
export interface ResolvedJobQueueOptions {
  dataSource: string | undefined;
  /** The queue's schema, checked by `schemaOption` (schema-name.validation.ts). */
  schema: string;
  workerId: string;
  worker: ResolvedWorkerOptions | false;
  staleAfterMs: number;
  heartbeatIntervalMs: number;
  reaperIntervalMs: number;
  stagerIntervalMs: number;
  statsIntervalMs: number;
  shutdownTimeoutMs: number;
  defaultMaxAttempts: number;
  backoff: ResolvedBackoff;
  maxPayloadBytes: number;
  maxResultBytes: number;
  maxBatchSize: number;
  maxBatchBytes: number;
  progressThrottleMs: number;
  /** 0: no timeout. */
  databaseTimeoutMs: number;
  /** For job types no handler has stored a retention for (see `JobPruner`). */
  retention: ResolvedRetention;
  retentionIntervalMs: number;
}

const MODULE_KEYS = [
  'dataSource',
  'schema',
  'workerId',
  'worker',
  'staleAfterMs',
  'heartbeatIntervalMs',
  'reaperIntervalMs',
  'stagerIntervalMs',
  'statsIntervalMs',
  'shutdownTimeoutMs',
  'defaultMaxAttempts',
  'backoff',
  'maxPayloadBytes',
  'maxResultBytes',
  'maxBatchSize',
  'maxBatchBytes',
  'progressThrottleMs',
  'databaseTimeoutMs',
  'retention',
  'retentionIntervalMs',
] as const satisfies readonly (keyof JobQueueModuleOptions)[];
const WORKER_KEYS = [
  'concurrency',
  'batchSize',
  'prefetch',
  'pollIntervalMs',
  'jobTypes',
  'listen',
  'autoStart',
] as const satisfies readonly (keyof JobQueueWorkerOptions)[];
const BACKOFF_KEYS = ['baseDelayMs', 'maxDelayMs', 'jitter'] as const;
// Named only to keep `isGlobal` (a ConfigurableModuleBuilder extra) from reading as unknown.
const EXTRA_KEYS = ['isGlobal'];

function fail(option: string, value: unknown, expected: string): never {
  throw new InvalidJobQueueOptionsError(INVALID_OPTION(option, value, expected), option, value);
}

function rejectUnknownKeys(
  value: object,
  known: readonly string[],
  prefix: string,
  ignored: readonly string[] = [],
): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key) && !ignored.includes(key)) {
      const option = prefix + key;
      throw new InvalidJobQueueOptionsError(UNKNOWN_OPTION(option, known), option, undefined);
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An integer in `[min, max]`; `max` is PG_INT_MAX unless given (most counts and periods here end
 * up in an int column or a timer).
 */
export function intOption(
  option: string,
  value: unknown,
  fallback: number,
  min: number,
  max = PG_INT_MAX,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(option, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

function booleanOption(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(option, value, 'true or false');
  return value;
}

function stringOption(option: string, value: unknown, maxLength: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    fail(option, value, `a non-empty string of at most ${maxLength} characters`);
  }
  return value;
}

function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Fills in defaults and checks a backoff; shared by module options and `@JobHandler` options. */
export function resolveBackoff(
  option: string,
  value: BackoffOptions | undefined,
  fallback: ResolvedBackoff,
): ResolvedBackoff {
  if (value === undefined) return fallback;
  if (!isPlainObject(value)) fail(option, value, 'an object { baseDelayMs, maxDelayMs, jitter }');
  rejectUnknownKeys(value, BACKOFF_KEYS, `${option}.`);
  const baseDelayMs = intOption(
    `${option}.baseDelayMs`,
    value.baseDelayMs,
    fallback.baseDelayMs,
    0,
  );
  const maxDelayMs = intOption(`${option}.maxDelayMs`, value.maxDelayMs, fallback.maxDelayMs, 0);
  if (maxDelayMs < baseDelayMs) {
    fail(`${option}.maxDelayMs`, maxDelayMs, `at least baseDelayMs (${baseDelayMs})`);
  }
  const jitter = value.jitter ?? fallback.jitter;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) {
    fail(`${option}.jitter`, jitter, 'a number from 0 to 1');
  }
  return { baseDelayMs, maxDelayMs, jitter };
}

function resolveWorker(value: unknown): ResolvedWorkerOptions | false {
  if (value === false) return false;
  const worker = value ?? {};
  if (!isPlainObject(worker)) fail('worker', value, 'false or an object');
  rejectUnknownKeys(worker, WORKER_KEYS, 'worker.');
  const concurrency = intOption('worker.concurrency', worker.concurrency, DEFAULT_CONCURRENCY, 1);
  const batchSize = intOption('worker.batchSize', worker.batchSize, concurrency, 1);
  const prefetch = intOption('worker.prefetch', worker.prefetch, 0, 0, MAX_PREFETCH);
  const pollIntervalMs = intOption(
    'worker.pollIntervalMs',
    worker.pollIntervalMs,
    DEFAULT_POLL_INTERVAL_MS,
    1,
  );
  let jobTypes: string[] | undefined;
  if (worker.jobTypes !== undefined) {
    if (!Array.isArray(worker.jobTypes) || worker.jobTypes.length === 0) {
      fail('worker.jobTypes', worker.jobTypes, 'a non-empty array of job types');
    }
    jobTypes = worker.jobTypes.map(
      (type, i) => stringOption(`worker.jobTypes[${i}]`, type, MAX_JOB_TYPE_LENGTH) as string,
    );
  }
  const listen = booleanOption('worker.listen', worker.listen, true);
  const autoStart = booleanOption('worker.autoStart', worker.autoStart, true);
  return { concurrency, batchSize, prefetch, pollIntervalMs, jobTypes, listen, autoStart };
}

/**
 * The one place options get their defaults and are validated, whichever way the module was
 * registered (`forRoot`, `useFactory`, `useClass`, `useExisting`).
 */
export function resolveJobQueueOptions(raw: JobQueueModuleOptions = {}): ResolvedJobQueueOptions {
  if (!isPlainObject(raw)) fail('options', raw, 'an object');
  rejectUnknownKeys(raw, MODULE_KEYS, '', EXTRA_KEYS);
  // At least 2: the heartbeat must fit below it, and no interval is shorter than 1 ms.
  const staleAfterMs = intOption('staleAfterMs', raw.staleAfterMs, DEFAULT_STALE_AFTER_MS, 2);
  const heartbeatIntervalMs = intOption(
    'heartbeatIntervalMs',
    raw.heartbeatIntervalMs,
    Math.min(DEFAULT_HEARTBEAT_INTERVAL_MS, Math.max(1, Math.floor(staleAfterMs / 3))),
    1,
  );
  if (heartbeatIntervalMs >= staleAfterMs) {
    fail('heartbeatIntervalMs', heartbeatIntervalMs, `less than staleAfterMs (${staleAfterMs})`);
  }
  return {
    dataSource: stringOption('dataSource', raw.dataSource, 255),
    schema: schemaOption(raw.schema),
    workerId: stringOption('workerId', raw.workerId, 255) ?? defaultWorkerId(),
    worker: resolveWorker(raw.worker),
    staleAfterMs,
    heartbeatIntervalMs,
    reaperIntervalMs: intOption(
      'reaperIntervalMs',
      raw.reaperIntervalMs,
      DEFAULT_REAPER_INTERVAL_MS,
      1,
    ),
    stagerIntervalMs: intOption(
      'stagerIntervalMs',
      raw.stagerIntervalMs,
      DEFAULT_STAGER_INTERVAL_MS,
      1,
    ),
    statsIntervalMs: intOption(
      'statsIntervalMs',
      raw.statsIntervalMs,
      DEFAULT_STATS_INTERVAL_MS,
      1,
    ),
    shutdownTimeoutMs: intOption(
      'shutdownTimeoutMs',
      raw.shutdownTimeoutMs,
      DEFAULT_SHUTDOWN_TIMEOUT_MS,
      0,
    ),
    defaultMaxAttempts: intOption(
      'defaultMaxAttempts',
      raw.defaultMaxAttempts,
      DEFAULT_MAX_ATTEMPTS,
      1,
    ),
    backoff: resolveBackoff('backoff', raw.backoff as BackoffOptions | undefined, {
      baseDelayMs: DEFAULT_BACKOFF_BASE_MS,
      maxDelayMs: DEFAULT_BACKOFF_MAX_MS,
      jitter: DEFAULT_BACKOFF_JITTER,
    }),
    maxPayloadBytes: intOption(
      'maxPayloadBytes',
      raw.maxPayloadBytes,
      DEFAULT_MAX_PAYLOAD_BYTES,
      1,
    ),
    maxResultBytes: intOption(
      'maxResultBytes',
      raw.maxResultBytes,
      DEFAULT_MAX_RESULT_BYTES,
      1,
      MAX_BATCH_BYTES_LIMIT,
    ),
    maxBatchSize: intOption('maxBatchSize', raw.maxBatchSize, DEFAULT_MAX_BATCH_SIZE, 1),
    maxBatchBytes: intOption(
      'maxBatchBytes',
      raw.maxBatchBytes,
      DEFAULT_MAX_BATCH_BYTES,
      1,
      MAX_BATCH_BYTES_LIMIT,
    ),
    progressThrottleMs: intOption(
      'progressThrottleMs',
      raw.progressThrottleMs,
      DEFAULT_PROGRESS_THROTTLE_MS,
      0,
    ),
    databaseTimeoutMs: intOption(
      'databaseTimeoutMs',
      raw.databaseTimeoutMs,
      DEFAULT_DATABASE_TIMEOUT_MS,
      0,
    ),
    retention: resolveRetention('retention', raw.retention, DEFAULT_RETENTION),
    retentionIntervalMs: intOption(
      'retentionIntervalMs',
      raw.retentionIntervalMs,
      DEFAULT_RETENTION_INTERVAL_MS,
      1,
    ),
  };
}

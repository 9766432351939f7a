import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MAX_BATCH_BYTES_LIMIT } from '../job-queue.constants';
import { JobQueueModuleOptions } from '../interfaces/job-queue-options.interface';
import { optionValidator as check } from '../validation/option.validator';
import { DEFAULT_BACKOFF, resolveBackoff } from './backoff.option';
import { integerOption, OptionSpec, resolveByTable } from './option-spec';
import { ResolvedJobQueueOptions } from './resolved-options';
import { DEFAULT_RETENTION, resolveRetention } from './retention.option';
import { schemaOption } from './schema.option';
import { WORKER_OPTIONS } from './worker-options.table';
import { EVENTS_OPTIONS } from './events-options.table';
import { resolveContextHooks } from './context-hooks.option';

type Resolved = ResolvedJobQueueOptions;

function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/**
 * Every module option, declared once: its default, its bounds and its README row (the README's
 * "Options" table; a test holds the two together). Typed against the public interface, so an
 * option added there and not here does not compile. The public interface keeps its own doc
 * comments, for editors' hover docs. Resolved in this order (`heartbeatIntervalMs` after
 * `staleAfterMs`), and unknown keys are refused listing the keys in this order.
 */
export const MODULE_OPTIONS = {
  dataSource: {
    defaultText: 'the default one',
    doc: 'name of the TypeORM data source to use (no pool of its own)',
    resolve: (value, option) =>
      value === undefined ? undefined : check.string(option, value, 255),
  },
  schema: {
    defaultText: "`'job_queue'`",
    doc:
      "the PostgreSQL schema of the queue's table and functions: lowercase letters, digits and " +
      '`_`, at most 49 characters, not `public`; another schema needs ' +
      '`jobQueueMigrationsFor({ schema })` in your migrations',
    resolve: (value) => schemaOption(value),
  },
  workerId: {
    defaultText: '`host:pid:random`',
    doc: 'how this process signs `jobs.worker_id`',
    resolve: (value, option) =>
      value === undefined ? defaultWorkerId() : check.string(option, value, 255),
  },
  worker: {
    defaultText: '`{}`',
    doc: 'worker settings below, or `false` for an enqueue-only process',
    resolve: (value, option) =>
      value === false
        ? false
        : resolveByTable(
            WORKER_OPTIONS,
            check.plainObject(option, value ?? {}, 'false or an object'),
            `${option}.`,
          ),
  },
  // At least 2: the heartbeat must fit below it, and no interval is shorter than 1 ms.
  staleAfterMs: integerOption({
    default: 60_000,
    min: 2,
    doc: 'a held job whose heartbeat is older than this is recovered',
  }),
  heartbeatIntervalMs: {
    defaultText: `${DEFAULT_HEARTBEAT_INTERVAL_MS} (at most a third of \`staleAfterMs\`)`,
    doc: 'lease renewal period',
    resolve: (value, option, { staleAfterMs }) => {
      const stale = staleAfterMs as number;
      const interval =
        value === undefined
          ? Math.min(DEFAULT_HEARTBEAT_INTERVAL_MS, Math.max(1, Math.floor(stale / 3)))
          : check.integer(option, value, 1);
      if (interval >= stale) check.fail(option, interval, `less than staleAfterMs (${stale})`);
      return interval;
    },
  },
  reaperIntervalMs: integerOption({
    default: 15_000,
    min: 1,
    doc: 'how often a worker looks for stale jobs (and stuck ones: `stuckAfterMs`)',
  }),
  stuckAfterMs: {
    defaultText: '300000',
    doc:
      'a job `waiting` this long for a key with no running job and no rate window that will ' +
      "release it is moved back to `pending`, with a warning per type (a safety net: the queue's " +
      "own releases leave one only when a type's handler is gone from every node, whose stored " +
      'limits stay until a worker with it boots); `false`: never',
    resolve: (value, option) =>
      value === false ? false : value === undefined ? 300_000 : check.integer(option, value, 1),
  },
  stagerIntervalMs: integerOption({
    default: 1_000,
    min: 1,
    doc:
      'how often each worker moves due `scheduled` jobs (delays, retry and rescue backoff) to ' +
      '`pending`; a delayed job starts at most about this long after its `runAt`',
  }),
  statsIntervalMs: integerOption({
    default: 5_000,
    min: 1,
    doc:
      'how often each worker checks whether the snapshot `stats()` reads is due for a recount; ' +
      'a recount waits at least this long and at least ten times as long as the last count ' +
      'took (see "Stats")',
  }),
  shutdownTimeoutMs: integerOption({
    default: 10_000,
    min: 0,
    doc: 'on shutdown, how long running handlers may finish before they are aborted',
  }),
  defaultMaxAttempts: integerOption({
    default: 3,
    min: 1,
    doc: 'attempts of a job whose handler and enqueue name none',
  }),
  backoff: {
    defaultText:
      `\`{ baseDelayMs: ${DEFAULT_BACKOFF.baseDelayMs}, maxDelayMs: ` +
      `${DEFAULT_BACKOFF.maxDelayMs}, jitter: ${DEFAULT_BACKOFF.jitter} }\``,
    doc: 'retry delays: `base · 2^(attempt-1)`, capped, ±jitter',
    resolve: (value, option) => resolveBackoff(option, value, DEFAULT_BACKOFF),
  },
  maxPayloadBytes: integerOption({
    default: 1024 * 1024,
    min: 1,
    doc: 'largest `data`, in bytes of JSON',
  }),
  maxResultBytes: integerOption({
    default: 1024 * 1024,
    min: 1,
    max: MAX_BATCH_BYTES_LIMIT,
    doc:
      'largest handler result stored, in bytes of JSON; a larger one, or one jsonb cannot hold ' +
      "(NUL, unpaired surrogate, BigInt, cycle), fails that attempt (retried per the job's " +
      `policy) with a \`last_error\` naming the problem, never the result (at most ${MAX_BATCH_BYTES_LIMIT})`,
  }),
  maxMetaBytes: integerOption({
    default: 8 * 1024,
    min: 1,
    max: MAX_BATCH_BYTES_LIMIT,
    doc:
      'largest `meta` stored with a job (what `context` and instruments capture at enqueue), in ' +
      'bytes of JSON; a larger one is refused at enqueue (`InvalidJobInputError`, field `meta`)',
  }),
  context: {
    defaultText: 'none',
    doc:
      "hooks `{ capture, restore }`: `capture()` at enqueue fills the job's `meta`, " +
      '`restore(meta, run)` runs each handler call inside it; see "Per-job context"',
    resolve: (value, option) => resolveContextHooks(option, value),
  },
  transactionHost: {
    defaultText: 'false',
    doc:
      "`enqueue` and `enqueueMany` without `manager` join the active transaction of the app's " +
      '`TransactionHost` (`@nestjs-cls/transactional`, TypeORM adapter): `true` the default ' +
      'host, a string a named one; see "Handlers in transactions"',
    resolve: (value, option) =>
      value === undefined
        ? false
        : typeof value === 'string'
          ? check.string(option, value, 255)
          : check.boolean(option, value),
  },
  maxBatchSize: integerOption({
    default: 10_000,
    min: 1,
    doc:
      'most jobs one `enqueueMany` call takes, and most steps one `flow()` takes; more is ' +
      'refused (`InvalidJobInputError`, field `jobs` or `steps`) before any job is looked at',
  }),
  // An `enqueueMany` batch goes to PostgreSQL as one jsonb document, which can hold at most
  // MAX_BATCH_BYTES_LIMIT bytes, and jsonb can take up to 6 times the bytes of its JSON text
  // (`[0,0,…]`): 32 MB of data stays below that whatever its shape.
  maxBatchBytes: integerOption({
    default: 32 * 1024 * 1024,
    defaultText: '33554432 (32 MB)',
    min: 1,
    max: MAX_BATCH_BYTES_LIMIT,
    doc:
      'most bytes of `data` JSON, all jobs together, in one `enqueueMany` call; refused at the ' +
      `job that crosses it (at most ${MAX_BATCH_BYTES_LIMIT}: jsonb's limit)`,
  }),
  progressThrottleMs: integerOption({
    default: 250,
    min: 0,
    doc: 'at most one progress write per job per period; the last value always lands',
  }),
  databaseTimeoutMs: integerOption({
    default: 10_000,
    min: 0,
    doc:
      'longest wait per `QueueService` statement; then (or on a refused or dropped connection) ' +
      'the call rejects with `JobQueueUnavailableError`. 0: no timeout. A timed-out INSERT may ' +
      'still commit: give a retried enqueue a `uniqueKey`',
  }),
  retention: {
    defaultText:
      `\`{ completedMs: ${DEFAULT_RETENTION.completedMs}, failedMs: ` +
      `${DEFAULT_RETENTION.failedMs}, cancelledMs: ${DEFAULT_RETENTION.cancelledMs} }\``,
    doc:
      'how long finished jobs are kept, by status (1 day, 7 days, 7 days); a status set to ' +
      '`false` is kept forever, `retention: false` keeps every finished job; see "Retention"',
    resolve: (value, option) => resolveRetention(option, value, DEFAULT_RETENTION),
  },
  retentionIntervalMs: integerOption({
    default: 60_000,
    min: 1,
    doc:
      "how often each worker's pruner deletes finished jobs past their retention (one node at " +
      'a time)',
  }),
  events: {
    defaultText: '`{}`',
    doc: 'job event settings below (`@OnJobEvent`, `waitForJob`); see "Job events"',
    resolve: (value, option) =>
      resolveByTable(
        EVENTS_OPTIONS,
        check.plainObject(option, value ?? {}, 'an object'),
        `${option}.`,
      ),
  },
} satisfies { [K in keyof JobQueueModuleOptions]-?: OptionSpec<Resolved[K], Resolved> };

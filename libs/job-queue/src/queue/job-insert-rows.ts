import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { BATCH_TOO_MANY_BYTES, BATCH_TOO_MANY_JOBS } from '../job-queue.messages';
import { InvalidJobInputError } from '../errors';
import { EnqueueManyItem, JobOptions } from '../interfaces/enqueue-options.interface';
import { JobInsertRow } from '../sql/insert-jobs.query';
import { jobInput } from '../validation/input.validator';
import {
  checkConcurrencyKey,
  checkInteger,
  checkJobType,
  checkRunAt,
  checkUniqueKey,
} from '../validation/job-input.checks';
import { measureData } from '../validation/json-data';
import { ResolvedRetention } from '../options/resolved-options';
import { resolveUniqueness } from './uniqueness-options';

/** The retention this process knows for a job type: its handler's, else the module's. */
export type RetentionOf = (jobType: string) => ResolvedRetention;

/** The options one job may have, at `enqueue` and per item of `enqueueMany`. */
export const JOB_OPTION_KEYS = [
  'priority',
  'runAt',
  'delayMs',
  'maxAttempts',
  'uniqueKey',
  'uniqueStates',
  'uniqueForMs',
  'debounceMs',
  'throttleMs',
  'concurrencyKey',
] as const;

/** A row to insert, and the bytes of its `data` JSON (counted against `maxBatchBytes`). */
export type CheckedInsertRow = JobInsertRow & { dataBytes: number };

/**
 * One job (`type`, `data` and its options) checked and turned into the row to insert; `path`
 * goes before every field an error names (`jobs[3].`). Nothing is sent before all are checked.
 */
export function toJobInsertRow(
  path: string,
  item: EnqueueManyItem<unknown>,
  maxPayloadBytes: number,
  retentionOf: RetentionOf,
): CheckedInsertRow {
  if (typeof item !== 'object' || item === null) {
    jobInput.fail(path ? path.slice(0, -1) : 'options', item, 'an object');
  }
  jobInput.knownKeys(item, [...JOB_OPTION_KEYS, 'type', 'data'], {
    prefix: path,
    listed: JOB_OPTION_KEYS,
  });
  const opts: JobOptions = item;
  if (opts.runAt !== undefined && opts.delayMs !== undefined) {
    jobInput.fail(`${path}delayMs`, opts.delayMs, 'either runAt or delayMs, not both');
  }
  const jobType = checkJobType(`${path}type`, item.type);
  const uniqueness = resolveUniqueness(path, opts, retentionOf(jobType));
  const data = measureData(`${path}data`, item.data, maxPayloadBytes);
  return {
    jobType,
    dataJson: data.json,
    dataBytes: data.bytes,
    priority:
      opts.priority === undefined
        ? DEFAULT_PRIORITY
        : checkInteger(`${path}priority`, opts.priority),
    runAt: opts.runAt === undefined ? null : checkRunAt(`${path}runAt`, opts.runAt),
    // A debounced job is due debounceMs from now, like a delay (it has neither runAt nor delayMs).
    delayMs:
      uniqueness.debounceMs ??
      (opts.delayMs === undefined ? 0 : checkInteger(`${path}delayMs`, opts.delayMs, 0)),
    maxAttempts:
      opts.maxAttempts === undefined
        ? null
        : checkInteger(`${path}maxAttempts`, opts.maxAttempts, 1),
    uniqueKey:
      opts.uniqueKey === undefined ? null : checkUniqueKey(`${path}uniqueKey`, opts.uniqueKey),
    uniqueStates: uniqueness.statesMask,
    uniqueWindowMs: uniqueness.windowMs,
    debounceMs: uniqueness.debounceMs,
    concurrencyKey:
      opts.concurrencyKey === undefined
        ? null
        : checkConcurrencyKey(`${path}concurrencyKey`, opts.concurrencyKey),
    // Filled in by the enqueue from its instruments (`context`, tracing), once per call.
    metaJson: null,
  };
}

/** The caps on one `enqueueMany` call. */
export interface BatchCaps {
  maxBatchSize: number;
  maxBatchBytes: number;
  maxPayloadBytes: number;
}

/**
 * An `enqueueMany` batch as rows to insert, refused (field `jobs`) past `maxBatchSize` jobs
 * before any is looked at, and past `maxBatchBytes` of data at the job that crosses it, so
 * nothing past that job is serialised.
 */
export function toBatchInsertRows(
  items: unknown[],
  caps: BatchCaps,
  retentionOf: RetentionOf,
): JobInsertRow[] {
  if (items.length > caps.maxBatchSize) {
    throw new InvalidJobInputError(
      BATCH_TOO_MANY_JOBS(items.length, caps.maxBatchSize),
      'jobs',
      `<${items.length} jobs>`,
    );
  }
  let bytes = 0;
  const rows = items.map((item, i) => {
    const row = toJobInsertRow(
      `jobs[${i}].`,
      item as EnqueueManyItem<unknown>,
      caps.maxPayloadBytes,
      retentionOf,
    );
    bytes += row.dataBytes;
    if (bytes > caps.maxBatchBytes) {
      throw new InvalidJobInputError(
        BATCH_TOO_MANY_BYTES(i, caps.maxBatchBytes),
        'jobs',
        `<more than ${caps.maxBatchBytes} bytes>`,
      );
    }
    return row;
  });
  checkSharedKeys(rows);
  return rows;
}

/**
 * Jobs of one batch that share a `uniqueKey` share its uniqueness options too: each is then
 * what one enqueue after another would be (a duplicate `skipped`, a debounce `replaced`), which
 * mixed policies for one key could not say.
 */
function checkSharedKeys(rows: readonly JobInsertRow[]): void {
  const first = new Map<string, number>();
  rows.forEach((row, i) => {
    if (row.uniqueKey === null) return;
    const j = first.get(row.uniqueKey);
    if (j === undefined) {
      first.set(row.uniqueKey, i);
      return;
    }
    const other = rows[j];
    if (
      other.uniqueStates !== row.uniqueStates ||
      other.uniqueWindowMs !== row.uniqueWindowMs ||
      other.debounceMs !== row.debounceMs
    ) {
      jobInput.fail(
        `jobs[${i}].uniqueKey`,
        row.uniqueKey,
        `the uniqueness options of jobs[${j}], which has the same uniqueKey`,
      );
    }
  });
}

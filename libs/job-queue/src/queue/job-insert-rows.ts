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

/** The options one job may have, at `enqueue` and per item of `enqueueMany`. */
export const JOB_OPTION_KEYS = [
  'priority',
  'runAt',
  'delayMs',
  'maxAttempts',
  'uniqueKey',
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
  const data = measureData(`${path}data`, item.data, maxPayloadBytes);
  return {
    jobType: checkJobType(`${path}type`, item.type),
    dataJson: data.json,
    dataBytes: data.bytes,
    priority:
      opts.priority === undefined
        ? DEFAULT_PRIORITY
        : checkInteger(`${path}priority`, opts.priority),
    runAt: opts.runAt === undefined ? null : checkRunAt(`${path}runAt`, opts.runAt),
    delayMs: opts.delayMs === undefined ? 0 : checkInteger(`${path}delayMs`, opts.delayMs, 0),
    maxAttempts:
      opts.maxAttempts === undefined
        ? null
        : checkInteger(`${path}maxAttempts`, opts.maxAttempts, 1),
    uniqueKey:
      opts.uniqueKey === undefined ? null : checkUniqueKey(`${path}uniqueKey`, opts.uniqueKey),
    concurrencyKey:
      opts.concurrencyKey === undefined
        ? null
        : checkConcurrencyKey(`${path}concurrencyKey`, opts.concurrencyKey),
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
export function toBatchInsertRows(items: unknown[], caps: BatchCaps): JobInsertRow[] {
  if (items.length > caps.maxBatchSize) {
    throw new InvalidJobInputError(
      BATCH_TOO_MANY_JOBS(items.length, caps.maxBatchSize),
      'jobs',
      `<${items.length} jobs>`,
    );
  }
  let bytes = 0;
  return items.map((item, i) => {
    const row = toJobInsertRow(
      `jobs[${i}].`,
      item as EnqueueManyItem<unknown>,
      caps.maxPayloadBytes,
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
}

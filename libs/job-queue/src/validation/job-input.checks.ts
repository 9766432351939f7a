import {
  MAX_CONCURRENCY_KEY_LENGTH,
  MAX_JOB_TYPE_LENGTH,
  MAX_STAGE_LENGTH,
  MAX_UNIQUE_KEY_LENGTH,
  UNIQUE_WINDOW_SEPARATOR,
  PG_INT_MIN,
} from '../job-queue.constants';
import { jobInput } from './input.validator';
import { characterCount, STORABLE_TEXT, UNSTORABLE_TEXT } from './storable-text';

// Checks of QueueService arguments. Each throws an InvalidJobInputError naming the field
// before anything is written; `field` carries the caller's path (`jobs[3].priority`).

/** Text for a column of at most `maxLength` characters. */
export function checkText(field: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string')
    jobInput.fail(field, value, `a string of at most ${maxLength} characters`);
  if (UNSTORABLE_TEXT.test(value)) jobInput.fail(field, value, `text ${STORABLE_TEXT}`);
  if (characterCount(value, maxLength) > maxLength) {
    jobInput.fail(field, value, `at most ${maxLength} characters`);
  }
  return value;
}

export function checkJobType(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    jobInput.fail(field, value, `a non-blank string of at most ${MAX_JOB_TYPE_LENGTH} characters`);
  }
  return checkText(field, value, MAX_JOB_TYPE_LENGTH);
}

export function checkInteger(field: string, value: unknown, min = PG_INT_MIN): number {
  return jobInput.integer(field, value, min);
}

/**
 * PostgreSQL's lowest timestamptz, 4714-11-24 00:00 UTC BC (ISO year -4713). Its highest, in
 * 294276 AD, lies beyond every valid Date (the last is in 275760 AD).
 */
const PG_TIMESTAMPTZ_MIN_MS = Date.UTC(-4713, 10, 24);

/** A Date PostgreSQL's timestamptz holds. */
export function checkRunAt(field: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    jobInput.fail(field, value, 'a valid Date');
  if (value.getTime() < PG_TIMESTAMPTZ_MIN_MS) {
    jobInput.fail(
      field,
      value,
      `a Date from 4714-11-24T00:00:00Z BC on (PostgreSQL's lowest timestamptz)`,
    );
  }
  return value;
}

/** A key (`uniqueKey`, `concurrencyKey`): text of 1 to `maxLength` characters. */
function checkKey(field: string, value: unknown, maxLength: number): string {
  if (value === '') {
    jobInput.fail(field, value, `a non-empty string of at most ${maxLength} characters`);
  }
  return checkText(field, value, maxLength);
}

/** A `uniqueKey`: a key without U+001F, which separates a stored key from its window. */
export function checkUniqueKey(field: string, value: unknown): string {
  const key = checkKey(field, value, MAX_UNIQUE_KEY_LENGTH);
  if (key.includes(UNIQUE_WINDOW_SEPARATOR)) {
    jobInput.fail(field, key, 'text without U+001F (it separates a stored key from its window)');
  }
  return key;
}

export function checkConcurrencyKey(field: string, value: unknown): string {
  return checkKey(field, value, MAX_CONCURRENCY_KEY_LENGTH);
}

export function checkProgress(field: string, value: unknown): number {
  return Math.round(jobInput.number(field, value, 0, 100));
}

export function checkStage(field: string, value: unknown): string | undefined {
  return value === undefined ? undefined : checkText(field, value, MAX_STAGE_LENGTH);
}

/** Job ids are bigint: accept a safe positive integer or its decimal string, return the string. */
export function checkJobId(field: string, value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^[1-9][0-9]{0,18}$/.test(value) && BigInt(value) < 2n ** 63n) {
    return value;
  }
  jobInput.fail(field, value, 'a job id (a positive integer or its decimal string)');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A flow's id, as `QueueService.flow` made it: a UUID. */
export function checkFlowId(field: string, value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value))
    jobInput.fail(field, value, 'a flow id (a UUID)');
  return value.toLowerCase();
}

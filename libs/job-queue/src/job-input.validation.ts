import {
  MAX_JOB_TYPE_LENGTH,
  MAX_STAGE_LENGTH,
  MAX_UNIQUE_KEY_LENGTH,
  PG_INT_MAX,
  PG_INT_MIN,
} from './job-queue.constants';
import { INVALID_INPUT } from './job-queue.messages';
import { InvalidJobInputError } from './errors';

// Checks of QueueService arguments. Each throws an InvalidJobInputError naming the field
// before anything is written; `field` carries the caller's path (`jobs[3].priority`).

function fail(field: string, value: unknown, expected: string): never {
  throw new InvalidJobInputError(INVALID_INPUT(field, value, expected), field, value);
}

export function checkJobType(field: string, value: unknown): string {
  if (
    typeof value !== 'string' ||
    value.trim().length === 0 ||
    value.length > MAX_JOB_TYPE_LENGTH
  ) {
    fail(field, value, `a non-blank string of at most ${MAX_JOB_TYPE_LENGTH} characters`);
  }
  return value;
}

export function checkInteger(field: string, value: unknown, min = PG_INT_MIN): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > PG_INT_MAX) {
    fail(field, value, `an integer from ${min} to ${PG_INT_MAX}`);
  }
  return value;
}

export function checkRunAt(field: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) fail(field, value, 'a valid Date');
  return value;
}

export function checkUniqueKey(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_UNIQUE_KEY_LENGTH) {
    fail(field, value, `a non-empty string of at most ${MAX_UNIQUE_KEY_LENGTH} characters`);
  }
  return value;
}

export function checkProgress(field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 100)) {
    fail(field, value, 'a number from 0 to 100');
  }
  return Math.round(value);
}

export function checkStage(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_STAGE_LENGTH || value.includes('\u0000')) {
    fail(field, value, `a string of at most ${MAX_STAGE_LENGTH} characters without NUL`);
  }
  return value;
}

/** Job ids are bigint: accept a safe positive integer or its decimal string, return the string. */
export function checkJobId(field: string, value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^[1-9][0-9]{0,18}$/.test(value) && BigInt(value) < 2n ** 63n) {
    return value;
  }
  fail(field, value, 'a job id (a positive integer or its decimal string)');
}

/**
 * Serialises `data` to the JSON stored in `jobs.data`, refusing whatever JSON would silently
 * change or drop (functions, symbols, NaN/Infinity, `undefined` at the top) or PostgreSQL's jsonb
 * refuses (`\u0000`), and anything over `maxBytes`. BigInt and cycles make JSON.stringify throw.
 */
export function serialiseData(field: string, value: unknown, maxBytes: number): string {
  const json = isPlainJson(value, 0) ? JSON.stringify(value) : serialiseChecked(field, value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidJobInputError(
      `Invalid job ${field}: ${bytes} bytes of JSON. Expected at most ${maxBytes} bytes (maxPayloadBytes).`,
      field,
      `<${bytes} bytes>`,
    );
  }
  return json;
}

/** Deeper than this, the checked path decides (and names a cycle). */
const MAX_PLAIN_DEPTH = 64;

/**
 * True when JSON.stringify keeps `value` exactly and jsonb accepts it: the usual payload, which
 * then skips the checked path below (a replacer call per key was most of `enqueueMany`'s
 * validation time). Anything else (undefined, class instances, BigInt …) takes the checked path,
 * which refuses it by name or serialises it the same way.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return !value.includes('\u0000');
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null || value instanceof Date) return true;
  if (depth >= MAX_PLAIN_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  if ('toJSON' in value) return false;
  for (const key in value) {
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function serialiseChecked(field: string, value: unknown): string {
  let json: string | undefined;
  // The path of each object reached so far, so a bad value deep inside is named in full.
  const paths = new WeakMap<object, string>();
  try {
    json = JSON.stringify(value, function (this: object, key: string, item: unknown) {
      const parent = paths.get(this) ?? field;
      const where =
        key === '' ? field : Array.isArray(this) ? `${parent}[${key}]` : `${parent}.${key}`;
      if (typeof item === 'object' && item !== null) paths.set(item, where);
      if (typeof item === 'function' || typeof item === 'symbol') {
        fail(where, item, 'JSON-serialisable data (no functions or symbols)');
      }
      if (typeof item === 'bigint') fail(where, item, 'JSON-serialisable data (no BigInt)');
      if (typeof item === 'number' && !Number.isFinite(item)) {
        fail(where, item, 'JSON-serialisable data (finite numbers only)');
      }
      if (typeof item === 'string' && item.includes('\u0000')) {
        fail(where, item, 'strings without the NUL character (jsonb cannot store it)');
      }
      return item;
    });
  } catch (error) {
    if (error instanceof InvalidJobInputError) throw error;
    fail(field, value, `JSON-serialisable data (${(error as Error).message})`);
  }
  if (json === undefined) fail(field, value, 'JSON-serialisable data');
  return json;
}

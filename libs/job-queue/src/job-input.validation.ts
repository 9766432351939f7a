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

/**
 * Text PostgreSQL cannot store: NUL (text and jsonb refuse it) and a UTF-16 surrogate without its
 * pair (it has no UTF-8 encoding). With the `u` flag a well-formed pair is one code point, never
 * `\p{Cs}`.
 */
const UNSTORABLE_TEXT = /[\0\p{Cs}]/u;
const STORABLE_TEXT = 'without NUL or unpaired UTF-16 surrogates (PostgreSQL cannot store them)';

/** Characters as PostgreSQL counts them (code points), counting no further than `max + 1`. */
function characterCount(text: string, max: number): number {
  if (text.length <= max) return text.length; // never more characters than UTF-16 units
  let count = 0;
  for (const _ of text) if (++count > max) break;
  return count;
}

/** Text for a column of at most `maxLength` characters. */
export function checkText(field: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string') fail(field, value, `a string of at most ${maxLength} characters`);
  if (UNSTORABLE_TEXT.test(value)) fail(field, value, `text ${STORABLE_TEXT}`);
  if (characterCount(value, maxLength) > maxLength) {
    fail(field, value, `at most ${maxLength} characters`);
  }
  return value;
}

export function checkJobType(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    fail(field, value, `a non-blank string of at most ${MAX_JOB_TYPE_LENGTH} characters`);
  }
  return checkText(field, value, MAX_JOB_TYPE_LENGTH);
}

export function checkInteger(field: string, value: unknown, min = PG_INT_MIN): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > PG_INT_MAX) {
    fail(field, value, `an integer from ${min} to ${PG_INT_MAX}`);
  }
  return value;
}

/**
 * PostgreSQL's lowest timestamptz, 4714-11-24 00:00 UTC BC (ISO year -4713). Its highest, in
 * 294276 AD, lies beyond every valid Date (the last is in 275760 AD).
 */
const PG_TIMESTAMPTZ_MIN_MS = Date.UTC(-4713, 10, 24);

/** A Date PostgreSQL's timestamptz holds. */
export function checkRunAt(field: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) fail(field, value, 'a valid Date');
  if (value.getTime() < PG_TIMESTAMPTZ_MIN_MS) {
    fail(field, value, `a Date from 4714-11-24T00:00:00Z BC on (PostgreSQL's lowest timestamptz)`);
  }
  return value;
}

export function checkUniqueKey(field: string, value: unknown): string {
  if (value === '') {
    fail(field, value, `a non-empty string of at most ${MAX_UNIQUE_KEY_LENGTH} characters`);
  }
  return checkText(field, value, MAX_UNIQUE_KEY_LENGTH);
}

export function checkProgress(field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 100)) {
    fail(field, value, 'a number from 0 to 100');
  }
  return Math.round(value);
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
  fail(field, value, 'a job id (a positive integer or its decimal string)');
}

/**
 * Refuses part of `data` by its path and the kind of thing found there. Payload text never goes
 * into the error (message or `value`), so neither the caller's error handling nor a log shows it.
 */
function refuseData(field: string, found: string, expected: string): never {
  throw new InvalidJobInputError(
    `Invalid job ${field}: ${found}. Expected ${expected}.`,
    field,
    `<${found}>`,
  );
}

/** `data` as JSON and the length of that JSON in UTF-8 bytes. */
export interface SerialisedData {
  json: string;
  bytes: number;
}

/**
 * Serialises `data` to the JSON stored in `jobs.data` (or a handler's result to `jobs.result`),
 * refusing whatever JSON would silently change or drop (functions, symbols, NaN/Infinity,
 * `undefined` at the top), what PostgreSQL's jsonb refuses (NUL, unpaired surrogates, in strings
 * and keys alike), and anything over `maxBytes`, the option named `maxOption`. BigInt and cycles
 * make JSON.stringify throw.
 */
export function measureData(
  field: string,
  value: unknown,
  maxBytes: number,
  maxOption = 'maxPayloadBytes',
): SerialisedData {
  const json = isPlainJson(value, 0) ? JSON.stringify(value) : serialiseChecked(field, value);
  if (MAYBE_UNSTORABLE_JSON.test(json)) refuseUnstorableText(field, json);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidJobInputError(
      `Invalid job ${field}: ${bytes} bytes of JSON. Expected at most ${maxBytes} bytes (${maxOption}).`,
      field,
      `<${bytes} bytes>`,
    );
  }
  return { json, bytes };
}

/** `measureData`'s JSON alone. */
export function serialiseData(
  field: string,
  value: unknown,
  maxBytes: number,
  maxOption?: string,
): string {
  return measureData(field, value, maxBytes, maxOption).json;
}

/**
 * JSON.stringify (well-formed since Node 12) writes NUL as `\u0000` and an unpaired surrogate as
 * `\ud800`-`\udfff`, lowercase: one scan of the text finds both, in keys and strings, at any
 * depth. It also matches an escaped backslash before such letters (the string `\\u0000`);
 * `refuseUnstorableText` tells the two apart.
 */
const MAYBE_UNSTORABLE_JSON = /\\u(?:0000|d[89a-f])/;

/** Finds the string or key holding unstorable text and refuses it by path; returns if none does. */
function refuseUnstorableText(field: string, json: string): void {
  const stack: Array<[unknown, string]> = [[JSON.parse(json), field]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE_TEXT.test(value)) {
        refuseData(path, 'a string with NUL or an unpaired surrogate', `strings ${STORABLE_TEXT}`);
      }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`]);
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      if (keys.some((key) => UNSTORABLE_TEXT.test(key))) {
        refuseData(
          path,
          'an object key with NUL or an unpaired surrogate',
          `keys ${STORABLE_TEXT}`,
        );
      }
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push([(value as Record<string, unknown>)[keys[i]], `${path}.${keys[i]}`]);
      }
    }
  }
}

/** Deeper than this, the checked path decides (and names a cycle). */
const MAX_PLAIN_DEPTH = 64;

/**
 * True when JSON.stringify keeps `value` exactly: the usual payload, which then skips the checked
 * path below (a replacer call per key is what the checked path costs). Anything else
 * (undefined, class instances, BigInt …) takes the checked path, which refuses it by name or
 * serialises it the same way. Text jsonb refuses is found in the JSON afterwards, on both paths.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
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
      if (typeof item === 'function') refuseData(where, 'a function', 'JSON-serialisable data');
      if (typeof item === 'symbol') refuseData(where, 'a symbol', 'JSON-serialisable data');
      if (typeof item === 'bigint') refuseData(where, 'a BigInt', 'JSON-serialisable data');
      if (typeof item === 'number' && !Number.isFinite(item)) {
        refuseData(where, String(item), 'JSON-serialisable data (finite numbers only)');
      }
      return item;
    });
  } catch (error) {
    if (error instanceof InvalidJobInputError) throw error;
    // Only the kind of failure: a message (a toJSON's own, say) may quote the payload.
    const found =
      error instanceof TypeError && /circular/i.test(error.message)
        ? 'a circular reference'
        : `a value JSON.stringify cannot serialise (it threw ${(error as Error)?.name ?? 'a non-error'})`;
    refuseData(field, found, 'JSON-serialisable data');
  }
  if (json === undefined) refuseData(field, 'undefined', 'JSON-serialisable data');
  return json;
}

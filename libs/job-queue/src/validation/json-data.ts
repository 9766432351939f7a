import { InvalidJobInputError } from '../errors';
import { STORABLE_TEXT, UNSTORABLE_TEXT } from './storable-text';

// Job data (and handler results) as the JSON stored in jsonb: refused by path, and by the kind of
// thing found there, where JSON would change it or PostgreSQL refuse it; then measured.

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
 * `value` as the JSON stored in `jobs.data` (or a handler's result in `jobs.result`), refusing
 * whatever JSON would silently change or drop (functions, symbols, NaN/Infinity, `undefined` at
 * the top) and what PostgreSQL's jsonb refuses (NUL, unpaired surrogates, in strings and keys
 * alike). BigInt and cycles make JSON.stringify throw.
 */
export function toStorableJson(field: string, value: unknown): string {
  const json = isPlainJson(value, 0) ? JSON.stringify(value) : serialiseChecked(field, value);
  if (MAYBE_UNSTORABLE_JSON.test(json)) refuseUnstorableText(field, json);
  return json;
}

/** The length of `json` in UTF-8 bytes, refused past `maxBytes`, the option named `maxOption`. */
export function checkJsonSize(
  field: string,
  json: string,
  maxBytes: number,
  maxOption: string,
): number {
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidJobInputError(
      `Invalid job ${field}: ${bytes} bytes of JSON. Expected at most ${maxBytes} bytes (${maxOption}).`,
      field,
      `<${bytes} bytes>`,
    );
  }
  return bytes;
}

/** `toStorableJson`, then `checkJsonSize`: the JSON and its bytes. */
export function measureData(
  field: string,
  value: unknown,
  maxBytes: number,
  maxOption = 'maxPayloadBytes',
): SerialisedData {
  const json = toStorableJson(field, value);
  return { json, bytes: checkJsonSize(field, json, maxBytes, maxOption) };
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

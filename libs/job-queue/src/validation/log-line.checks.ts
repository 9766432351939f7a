import { InvalidJobInputError } from '../errors';
import { MAX_LOG_MESSAGE_CHARS } from '../job-queue.constants';
import { measureData } from './json-data';
import { characterCount, STORABLE_TEXT, UNSTORABLE_TEXT } from './storable-text';

// The checks of `ctx.log(message, data?)`. A log line is the handler's text, as private as a
// payload: errors say what kind of thing was found, never the text itself.

/** Most bytes of the JSON of a log line's `data`. */
export const MAX_LOG_DATA_BYTES = 4_096;

function refuseMessage(found: string, expected: string): never {
  throw new InvalidJobInputError(
    `Invalid log message: ${found}. Expected ${expected}.`,
    'message',
    `<${found}>`,
  );
}

/** A log line's message: text PostgreSQL stores, of at most `MAX_LOG_MESSAGE_CHARS` characters. */
export function checkLogMessage(value: unknown): string {
  if (typeof value !== 'string') {
    refuseMessage(value === null ? 'null' : `a ${typeof value}`, 'a string');
  }
  if (UNSTORABLE_TEXT.test(value))
    refuseMessage('a string with NUL or an unpaired surrogate', `text ${STORABLE_TEXT}`);
  const characters = characterCount(value, MAX_LOG_MESSAGE_CHARS);
  if (characters > MAX_LOG_MESSAGE_CHARS) {
    refuseMessage(
      `more than ${MAX_LOG_MESSAGE_CHARS} characters`,
      `at most ${MAX_LOG_MESSAGE_CHARS} characters`,
    );
  }
  return value;
}

/** A log line's `data` as JSON (checked like a payload, `MAX_LOG_DATA_BYTES` at most), or null. */
export function checkLogData(value: unknown): string | null {
  if (value === undefined) return null;
  return measureData('data', value, MAX_LOG_DATA_BYTES, `ctx.log's limit`).json;
}

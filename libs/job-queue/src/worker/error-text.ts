import { inspect } from 'node:util';

/** Longest `last_error` stored: enough for a message and a stack, bounded for hostile throws. */
export const MAX_ERROR_TEXT_LENGTH = 8_192;

/**
 * An Error's first line as `Error.prototype.toString` writes it: `Name: message`, the name alone
 * without a message, and `Error` when both are empty.
 */
function errorHeader(error: Error): string {
  const name = error.name === undefined ? 'Error' : String(error.name);
  const message = error.message === undefined ? '' : String(error.message);
  if (message === '') return name || 'Error';
  return name === '' ? message : `${name}: ${message}`;
}

/**
 * What a handler threw, as readable text for `last_error`: an Error's name, message and stack;
 * a string as is; anything else (undefined, objects, frozen or hostile ones) through inspect,
 * never `[object Object]`. Never throws.
 *
 * An Error's text always starts with `Name: message`, so its first line is a summary without
 * stack frames (a dead letter's `error`, the job log's `failed` row): the stack is used as is
 * only when it starts so, as V8 writes it. One that does not (assigned by hand, or formatted
 * before the message or name changed) follows the header.
 */
export function errorText(thrown: unknown): string {
  let text: string;
  try {
    if (thrown instanceof Error) {
      const header = errorHeader(thrown);
      const stack = typeof thrown.stack === 'string' ? thrown.stack : '';
      if (stack === header || stack.startsWith(`${header}\n`)) text = stack;
      else text = stack === '' ? header : `${header}\n${stack}`;
    } else if (typeof thrown === 'string') {
      text = thrown;
    } else {
      text = `Non-error thrown: ${inspect(thrown, { depth: 2, breakLength: Infinity })}`;
    }
  } catch {
    text = 'Non-error thrown (could not be rendered)';
  }
  // jsonb/text cannot hold NUL.
  text = text.replaceAll('\u0000', '\\0');
  return text.length > MAX_ERROR_TEXT_LENGTH
    ? `${text.slice(0, MAX_ERROR_TEXT_LENGTH)}… (truncated)`
    : text;
}

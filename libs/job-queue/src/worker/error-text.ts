import { inspect } from 'node:util';

/** Longest `last_error` stored: enough for a message and a stack, bounded for hostile throws. */
export const MAX_ERROR_TEXT_LENGTH = 8_192;

/**
 * What a handler threw, as readable text for `last_error`: an Error's name, message and stack;
 * a string as is; anything else (undefined, objects, frozen or hostile ones) through inspect,
 * never `[object Object]`. Never throws.
 */
export function errorText(thrown: unknown): string {
  let text: string;
  try {
    if (thrown instanceof Error) {
      text = thrown.stack?.includes(thrown.message)
        ? thrown.stack
        : `${thrown.name}: ${thrown.message}\n${thrown.stack ?? ''}`;
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

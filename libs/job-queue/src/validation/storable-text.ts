// What PostgreSQL's text and jsonb cannot hold, and how it counts characters: shared by the
// checks of text arguments and of JSON data.

/**
 * Text PostgreSQL cannot store: NUL (text and jsonb refuse it) and a UTF-16 surrogate without its
 * pair (it has no UTF-8 encoding). With the `u` flag a well-formed pair is one code point, never
 * `\p{Cs}`.
 */
export const UNSTORABLE_TEXT = /[\0\p{Cs}]/u;
export const STORABLE_TEXT =
  'without NUL or unpaired UTF-16 surrogates (PostgreSQL cannot store them)';

/** Characters as PostgreSQL counts them (code points), counting no further than `max + 1`. */
export function characterCount(text: string, max: number): number {
  if (text.length <= max) return text.length; // never more characters than UTF-16 units
  let count = 0;
  for (const _ of text) if (++count > max) break;
  return count;
}

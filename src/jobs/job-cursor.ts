/**
 * The `cursor` of `GET /jobs`: where the previous page ended, as the sort key of its last row.
 * The list is newest first by `id` (the primary key), so the key is that id; the next page is
 * `id < key`, read from the primary key index however deep the page is (an offset would read and
 * skip every row before it).
 *
 * Opaque to clients: base64url of `{"id":"<id>"}`. Decoding checks everything, so a cursor that
 * was not made here gets a 400 naming `cursor` (IsJobCursor), never a 500 or a query with a bad key.
 */
export interface JobCursor {
  /** The last listed job's id (a positive bigint, as text). */
  id: string;
}

/** PostgreSQL's bigint maximum: a larger id cannot be in the table, nor compared with `id`. */
const MAX_BIGINT = 9_223_372_036_854_775_807n;
/** Far more than `{"id":"9223372036854775807"}` in base64url needs. */
const MAX_CURSOR_LENGTH = 100;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ID = /^[1-9][0-9]{0,18}$/;

export function encodeJobCursor(cursor: JobCursor): string {
  return Buffer.from(JSON.stringify({ id: cursor.id }), 'utf8').toString('base64url');
}

/** What a malformed `cursor` is told, with (the start of) what was sent. */
export function badCursorMessage(value: unknown): string {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, MAX_CURSOR_LENGTH)) : '';
  return (
    `cursor must be the nextCursor of an earlier GET /jobs answer` +
    (shown ? ` (got ${shown}${String(value).length > MAX_CURSOR_LENGTH ? '…' : ''})` : '')
  );
}

/** A `cursor` as sent; undefined when it was not made by encodeJobCursor. */
export function decodeJobCursor(value: unknown): JobCursor | undefined {
  // `?cursor=a&cursor=b` arrives as an array, `?cursor[x]=` as an object: refused as well.
  if (typeof value !== 'string' || value.length > MAX_CURSOR_LENGTH || !BASE64URL.test(value)) {
    return undefined;
  }
  const bytes = Buffer.from(value, 'base64url');
  // Only the canonical encoding: no trailing bits, nothing Buffer would quietly drop.
  if (bytes.toString('base64url') !== value) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const id = (decoded as { id?: unknown } | null)?.id;
  if (
    typeof decoded !== 'object' ||
    decoded === null ||
    Array.isArray(decoded) ||
    Object.keys(decoded).length !== 1 ||
    typeof id !== 'string' ||
    !ID.test(id) ||
    BigInt(id) > MAX_BIGINT
  ) {
    return undefined;
  }
  return { id };
}

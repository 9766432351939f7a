/**
 * The `cursor` of `QueueService.listJobs`: where the previous page ended, as the id of its last
 * job (the list is newest first by id). Opaque to callers: base64url of `{"id":"<id>"}`. Decoding
 * checks everything, so a cursor that was not made here is refused, never sent to a query.
 */

/** PostgreSQL's bigint maximum: a larger id cannot be in the table, nor compared with `id`. */
const MAX_BIGINT = 9_223_372_036_854_775_807n;
/** Far more than `{"id":"9223372036854775807"}` in base64url needs. */
const MAX_CURSOR_LENGTH = 100;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ID = /^[1-9][0-9]{0,18}$/;

/** The cursor of the page after the job `id` (a positive bigint, as text). */
export function encodeJobListCursor(id: string): string {
  return Buffer.from(JSON.stringify({ id }), 'utf8').toString('base64url');
}

/** The last listed job's id of a cursor; undefined when `value` was not made by listJobs. */
export function decodeJobListCursor(value: unknown): string | undefined {
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
  return id;
}

/**
 * Whether `value` is a cursor `QueueService.listJobs` made (its `nextCursor`), checked as
 * `listJobs` checks it: for an app that refuses a bad cursor before calling, in words of its own.
 *
 * @publicApi
 */
export function isJobListCursor(value: unknown): value is string {
  return decodeJobListCursor(value) !== undefined;
}

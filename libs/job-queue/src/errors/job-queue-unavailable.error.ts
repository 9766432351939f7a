import { JobQueueError } from './job-queue.error';

/**
 * The database could not be reached, dropped the connection, or did not answer within
 * `databaseTimeoutMs`: the call may be retried later. `cause` holds the driver's error (none for
 * a timeout), not TypeORM's wrapper of it, which carries the statement's parameters.
 *
 * NOTE: it does not say the write did not happen. A statement that reached the server before the
 * connection broke or the timeout passed may still commit: an `enqueue` retried after this error
 * can add the job twice unless it has a `uniqueKey`. Inside the caller's transaction (`manager`)
 * the job exists only if that transaction commits.
 *
 * @publicApi
 */
export class JobQueueUnavailableError extends JobQueueError {}

/** Node socket errors that mean "no usable connection to the server". */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** SQLSTATEs of a server going away: admin/crash shutdown, starting up; class 08 is added below. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** node-postgres reports a dropped connection by message only, without a code. */
const CONNECTION_LOST_MESSAGE = /Connection terminated|not queryable|Client was closed/i;

/**
 * Whether `error` (or what it wraps: TypeORM's `driverError`, `cause`, an AggregateError's
 * `errors`) is about the connection rather than the statement. Statement errors (a constraint,
 * bad SQL) are not: they would fail again and must surface as they are.
 */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, message, driverError, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof message === 'string' && CONNECTION_LOST_MESSAGE.test(message)) return true;
  const nested = [driverError, cause, ...(Array.isArray(errors) ? errors : [])];
  return nested.some((inner) => inner !== error && isConnectionError(inner, depth + 1));
}

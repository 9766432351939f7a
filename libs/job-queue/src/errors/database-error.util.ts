import { JobQueueError } from './job-queue.error';
import { describeRefusal, JobQueueDatabaseError } from './job-queue-database.error';
import { isConnectionError, JobQueueUnavailableError } from './job-queue-unavailable.error';

/** TypeORM's QueryFailedError: the driver's error plus the statement's SQL and parameters. */
interface StatementError {
  driverError?: unknown;
  code?: unknown;
  table?: unknown;
  column?: unknown;
  constraint?: unknown;
  message?: unknown;
  errors?: unknown;
}

/** A statement the server refused, by what may be shown of it: never values. */
export interface StatementRefusal {
  /** The SQLSTATE, e.g. `23514`; `undefined` when the driver gave none. */
  code: string | undefined;
  names: { table?: string; column?: string; constraint?: string };
}

const optionalName = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/**
 * The server's refusal of a statement (a constraint, a trigger, bad input), by SQLSTATE and the
 * names it gave; `undefined` for anything else: a lost connection, an error of ours, an error
 * that never reached the server.
 */
export function statementRefusal(error: unknown): StatementRefusal | undefined {
  if (error instanceof JobQueueError || typeof error !== 'object' || error === null) return;
  if (isConnectionError(error)) return;
  const isStatementError =
    'driverError' in error || 'parameters' in error || 'query' in error || 'severity' in error;
  if (!isStatementError) return;
  const statementError = error as StatementError;
  const source = (statementError.driverError ?? error) as StatementError;
  return {
    code: optionalName(source.code ?? statementError.code),
    names: {
      table: optionalName(source.table),
      column: optionalName(source.column),
      constraint: optionalName(source.constraint),
    },
  };
}

/**
 * SQLSTATEs of a refusal that passes by itself, so the same statement is worth sending again:
 * a deadlock or serialization failure (class 40), resources running short (class 53: disk full,
 * out of memory, too many connections), a lock not available within `lock_timeout` (55P03).
 */
const TRANSIENT_SQLSTATE = /^(?:40|53)|^55P03$/;

/**
 * Whether a failed write is worth retrying as it is: the connection was lost (`isConnectionError`)
 * or the server refused it for a passing reason (`TRANSIENT_SQLSTATE`). Any other refusal (a
 * constraint, a trigger, a value the column cannot hold) would fail again the same way.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (isConnectionError(error)) return true;
  const code = statementRefusal(error)?.code;
  return code !== undefined && TRANSIENT_SQLSTATE.test(code);
}

/**
 * What `QueueService` throws for a failed statement: our own errors (a timeout) as they are, a
 * lost connection as `JobQueueUnavailableError` whose cause is the driver's error without
 * TypeORM's wrapper (which holds the parameters), a refused statement as `JobQueueDatabaseError`
 * (SQLSTATE and names only), and anything else (not a database error) unchanged.
 */
export function typedDatabaseError(error: unknown): unknown {
  if (error instanceof JobQueueError || typeof error !== 'object' || error === null) return error;
  if (isConnectionError(error)) {
    const driverError = (error as StatementError).driverError ?? error;
    return new JobQueueUnavailableError(
      `The database is unavailable: ${(driverError as Error).message}`,
      { cause: driverError },
    );
  }
  const refusal = statementRefusal(error);
  return refusal ? new JobQueueDatabaseError(refusal.code, refusal.names) : error;
}

/**
 * What a log line may say about a failed database call. Logs leave the database, so: a refused
 * statement by SQLSTATE and names only (the server message quotes values, the error's
 * `parameters` and `query` hold job data); a lost connection by the driver's message, which is
 * about the connection; our own errors by their message; anything else by its name alone.
 */
export function databaseErrorText(error: unknown): string {
  if (error instanceof JobQueueError) return error.message;
  if (isConnectionError(error)) return `connection lost: ${connectionText(error, 0)}`;
  const refusal = statementRefusal(error);
  if (refusal) return `refused: ${describeRefusal(refusal.code, refusal.names)}`;
  const name = error instanceof Error ? error.name : typeof error;
  return `${name} (its message is left out: it may quote job data)`;
}

/** The driver's own words about a lost connection (an AggregateError's first, if it has none). */
function connectionText(error: unknown, depth: number): string {
  const { driverError, message, errors, code } = (error ?? {}) as StatementError;
  if (depth < 4 && typeof driverError === 'object' && driverError !== null) {
    return connectionText(driverError, depth + 1);
  }
  if (typeof message === 'string' && message.length > 0) return message;
  if (depth < 4 && Array.isArray(errors) && errors.length > 0) {
    return connectionText(errors[0], depth + 1);
  }
  return typeof code === 'string' ? code : 'no details';
}

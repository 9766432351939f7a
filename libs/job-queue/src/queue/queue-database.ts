import { JobQueueDatabaseError, JobQueueUnavailableError } from '../errors';
import { statementRefusal, typedDatabaseError } from '../errors/database-error.util';
import { Queryable } from '../sql/queryable';
import { jobInput } from '../validation/input.validator';

/**
 * SQLSTATEs of a statement that lost a race with another transaction: a deadlock (40P01) or a
 * serialization failure (40001). PostgreSQL rolled it back whole, so sent again it may pass.
 */
const LOST_RACE_SQLSTATES: ReadonlySet<string> = new Set(['40P01', '40001']);
/** How many times a statement that lost a race is sent again before its error is thrown. */
export const LOST_RACE_RETRIES = 3;

/** A statement's error (raw, or as `JobQueueDatabaseError`) that says it lost a race. */
export function isLostRace(error: unknown): boolean {
  const code = error instanceof JobQueueDatabaseError ? error.code : statementRefusal(error)?.code;
  return code !== undefined && LOST_RACE_SQLSTATES.has(code);
}

export interface QueueDatabaseOptions {
  /**
   * The queue owns each statement's transaction (no caller's manager: every statement commits
   * alone), so a statement that lost a race (`LOST_RACE_SQLSTATES`) is sent again, after a
   * pause of 5-25 ms, up to `LOST_RACE_RETRIES` times. Inside a caller's transaction it is not:
   * PostgreSQL aborted the whole transaction, and only the caller can run it again.
   */
  retryLostRaces?: boolean;
}

/**
 * Where a `QueueService` call's statements go (`target`: the caller's manager, else the data
 * source), each bounded by `timeoutMs` (0: no bound). Connection failures become
 * `JobQueueUnavailableError` so a caller can tell "try later" from a refused statement, which
 * becomes `JobQueueDatabaseError`. Neither carries the driver's statement error: it holds the SQL
 * and its parameters (job payloads), and Nest logs an error's properties and cause.
 */
export function queueDatabase(
  target: Queryable,
  timeoutMs: number,
  { retryLostRaces = false }: QueueDatabaseOptions = {},
): Queryable {
  const once = async (sql: string, parameters?: unknown[]): Promise<unknown> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      if (timeoutMs === 0) return;
      timer = setTimeout(() => {
        reject(
          new JobQueueUnavailableError(
            `The database did not answer within ${timeoutMs} ms (databaseTimeoutMs); ` +
              `the statement was not cancelled and may still complete`,
          ),
        );
      }, timeoutMs);
    });
    try {
      return await Promise.race([target.query(sql, parameters), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    query: async (sql, parameters) => {
      for (let retries = 0; ; retries++) {
        try {
          return await once(sql, parameters);
        } catch (error) {
          if (retryLostRaces && retries < LOST_RACE_RETRIES && isLostRace(error)) {
            await new Promise((resume) => setTimeout(resume, 5 + Math.random() * 20));
            continue;
          }
          throw typedDatabaseError(error);
        }
      }
    },
  };
}

/** `manager` must run queries: an `EntityManager` (or a QueryRunner's). */
export function checkManager(manager: unknown): Queryable | undefined {
  if (manager === undefined) return undefined;
  if (typeof (manager as Partial<Queryable> | null)?.query !== 'function') {
    jobInput.fail('manager', manager, "an EntityManager (say, a transaction's)");
  }
  return manager as Queryable;
}

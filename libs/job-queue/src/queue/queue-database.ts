import { JobQueueUnavailableError } from '../errors';
import { typedDatabaseError } from '../errors/database-error.util';
import { Queryable } from '../sql/queryable';
import { jobInput } from '../validation/input.validator';

/**
 * Where a `QueueService` call's statements go (`target`: the caller's manager, else the data
 * source), each bounded by `timeoutMs` (0: no bound). Connection failures become
 * `JobQueueUnavailableError` so a caller can tell "try later" from a refused statement, which
 * becomes `JobQueueDatabaseError`. Neither carries the driver's statement error: it holds the SQL
 * and its parameters (job payloads), and Nest logs an error's properties and cause.
 */
export function queueDatabase(target: Queryable, timeoutMs: number): Queryable {
  return {
    query: async (sql, parameters) => {
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
      } catch (error) {
        throw typedDatabaseError(error);
      } finally {
        clearTimeout(timer);
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

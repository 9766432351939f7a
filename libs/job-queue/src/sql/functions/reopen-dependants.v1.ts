import { QueueSchema } from '../queue-schema';
import { blockedDependantsSql, FINISHED_STATUSES } from './resolve-dependants.v1';

/**
 * When `jobs_dependency_reopened` fires: a job with dependants left a finished status for an
 * unfinished one (`retry`, `redrive`, a retry after a cancel). Checked in the trigger's WHEN
 * clause, so only such a job costs a function call.
 */
export const DEPENDENCY_REOPENED_WHEN = `
      NEW.has_dependants AND OLD.status IN (${FINISHED_STATUSES})
      AND NEW.status NOT IN (${FINISHED_STATUSES})`;

/**
 * The trigger function of `jobs_dependency_reopened` (CountEachDependencyOnce, 1795939200019):
 * a dependency that had finished runs again, so each dependant still `blocked` waits for it
 * again: its unfinished count goes up by one, and `jobs_dependency_finished` takes that one off
 * when the dependency finishes again. Each edge is counted as finished at most once per time its
 * dependency finishes, whatever happens to the dependency in between.
 *
 * Dependants that already left `blocked` are not touched: one released (or finished) under
 * `continue` keeps what it did, one failed by the dependency under `fail` stays failed (its
 * failure stands until someone retries it).
 *
 * Rows are locked in id order, as `jobs_dependency_finished` locks them, so a reopen and a
 * finish of two dependencies of the same dependants never wait on each other in a cycle.
 */
export const createReopenDependantsV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.reopenDependants}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET plan_cache_mode = force_custom_plan
    AS $$
    BEGIN
      WITH dependants AS (${blockedDependantsSql(schema, 'NEW.id')})
      UPDATE ${schema.jobs} AS w SET
        unfinished_dependencies = w.unfinished_dependencies + 1,
        updated_at = pg_catalog.now()
      FROM dependants
      WHERE w.id = dependants.id AND w.status = 'blocked';
      RETURN NULL;
    END
    $$
  `;

import { PENDING_AGAIN_PAYLOAD, QueueSchema } from '../queue-schema';
import { oneJobEventPayload } from '../job-events.notify';

/** The statuses a job ends in; its dependants count it as finished in any of them. */
export const FINISHED_STATUSES = `'completed', 'failed', 'cancelled'`;

/**
 * When `jobs_dependency_finished` fires: a job that has dependants (`has_dependants`, set when
 * the first one was inserted) has just finished. Checked in the trigger's WHEN clause, so a job
 * without dependants, every job of a queue that uses no workflows, costs no function call.
 */
export const DEPENDENCY_FINISHED_WHEN = `
      NEW.has_dependants AND NEW.status IN (${FINISHED_STATUSES})
      AND OLD.status NOT IN (${FINISHED_STATUSES})`;

/**
 * The blocked dependants of job `dependency`, locked in id order: by `job_dependencies`' primary
 * key, then each by `jobs`' (the plan test EXPLAINs this text beside a million finished jobs).
 */
export const blockedDependantsSql = (schema: QueueSchema, dependency: string): string => `
          SELECT w.id FROM ${schema.jobDependencies} e
            JOIN ${schema.jobs} w ON w.id = e.job_id
          WHERE e.dependency_id = ${dependency} AND w.status = 'blocked'
          ORDER BY w.id
          FOR NO KEY UPDATE OF w`;

/**
 * The trigger function of `jobs_dependency_finished` (AddJobDependencies, 1795939200017): one of
 * the dependencies of each `blocked` dependant of NEW has finished. Each dependant counts one
 * unfinished dependency fewer, in this statement:
 *
 * - NEW failed or was cancelled, and the dependant's `on_dependency_failure` is `fail`: the
 *   dependant fails now, never having run (attempts stay 0), with a `last_error` naming NEW. Its
 *   own dependants follow through this trigger on its row, so a failure runs down the graph.
 * - Else, when that was its last unfinished dependency, it is due: `pending`, or `scheduled`
 *   when its `run_at` is later (the stager moves it), and the idle workers are woken.
 * - Else it stays `blocked`.
 *
 * Planned for each call's job (`force_custom_plan`): a cached generic plan would be made for an
 * average job's dependants, and a fan-in of 200,000 beside jobs of one each would make it a
 * read of the table for every job.
 *
 * Rows are locked in id order, so two transactions finishing dependencies of the same dependants
 * lock them in one order. Dependants that fail here send their `failed` event on the events
 * channel (origin empty: no process emitted it itself).
 *
 * A dependant inserted while NEW finishes cannot be missed: its insert locked NEW's row first
 * (see `lockDependencies`), so either this UPDATE waited for that insert to commit and now sees
 * it, or the insert waited for this one and read NEW as finished.
 */
export const createResolveDependantsV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.resolveDependants}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET plan_cache_mode = force_custom_plan
    AS $$
    DECLARE
      dependency_failed boolean := NEW.status <> 'completed';
      moved record;
      woken boolean := false;
    BEGIN
      FOR moved IN
        WITH dependants AS (${blockedDependantsSql(schema, 'NEW.id')})
        UPDATE ${schema.jobs} AS w SET
          unfinished_dependencies = w.unfinished_dependencies - 1,
          status = CASE
            WHEN dependency_failed AND w.on_dependency_failure = 'fail' THEN 'failed'
            WHEN w.unfinished_dependencies > 1 THEN 'blocked'
            WHEN w.run_at > pg_catalog.clock_timestamp() THEN 'scheduled'
            ELSE 'pending' END,
          last_error = CASE WHEN dependency_failed AND w.on_dependency_failure = 'fail'
            THEN pg_catalog.format('Dependency %s (%s) %s', NEW.id, NEW.job_type,
                   CASE NEW.status WHEN 'failed' THEN 'failed'::text ELSE 'was cancelled'::text END)
            ELSE w.last_error END,
          completed_at = CASE WHEN dependency_failed AND w.on_dependency_failure = 'fail'
            THEN pg_catalog.now() ELSE w.completed_at END,
          updated_at = pg_catalog.now()
        FROM dependants
        WHERE w.id = dependants.id AND w.status = 'blocked'
        RETURNING w.id, w.job_type, w.status, w.attempts, w.progress, w.current_stage
      LOOP
        IF moved.status = 'pending' THEN
          woken := true;
        ELSIF moved.status = 'failed' THEN
          PERFORM pg_catalog.pg_notify('${schema.eventsChannel}',
            ${oneJobEventPayload('moved', `'failed'::text`, `''::text`)});
        END IF;
      END LOOP;
      IF woken THEN
        PERFORM pg_catalog.pg_notify('${schema.insertedChannel}', '${PENDING_AGAIN_PAYLOAD}');
      END IF;
      RETURN NULL;
    END
    $$
  `;

/**
 * When `jobs_dependencies_kept` fires: a job with dependants, or with dependencies, is deleted
 * (by retention, or by hand).
 */
export const DEPENDENCIES_DELETED_WHEN = `
      OLD.has_dependants OR OLD.on_dependency_failure IS NOT NULL`;

/**
 * The trigger function of `jobs_dependencies_kept` (BEFORE DELETE, AddJobDependencies): a
 * finished job that an unfinished job depends on is kept (the delete skips it, so retention
 * passes it by until its dependants have finished: they read its result); a deleted job that had
 * dependencies takes its edges with it.
 */
export const createKeepDependenciesV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.keepDependencies}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF OLD.has_dependants AND EXISTS (
        SELECT 1 FROM ${schema.jobDependencies} e
          JOIN ${schema.jobs} w ON w.id = e.job_id
        WHERE e.dependency_id = OLD.id AND w.status NOT IN (${FINISHED_STATUSES})
      ) THEN
        RETURN NULL;
      END IF;
      IF OLD.on_dependency_failure IS NOT NULL THEN
        DELETE FROM ${schema.jobDependencies} e WHERE e.job_id = OLD.id;
      END IF;
      RETURN OLD;
    END
    $$
  `;

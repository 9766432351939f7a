import { QueueSchema } from '../queue-schema';

/**
 * The trigger function of `jobs_dead_lettered` (AddDeadLetters, 1795939200018): a job that ran
 * failed for good (see the trigger's WHEN clause), so if its type has a dead-letter type
 * (`job_types.dead_letter_type`, the handler's `deadLetter`, stored by each worker at start) a
 * job of that type is inserted in the same statement, due now, with `data`
 * `{ data, error, sourceJobId }`: the failed job's data, the first line of its `last_error` (the
 * worker writes an error's `Name: message` there first, its stack after; see
 * worker/error-text.ts) and its id as text. The copy keeps the job's priority and `meta` (so the
 * tracing and context captured at enqueue carry over); it has no unique key, no concurrency key
 * and no attempt limit of its own (its handler's, or the module's, apply). The insert trigger
 * wakes the workers.
 *
 * The time is the failure's (`completed_at`, the queue's time that statement wrote), else now():
 * the same in production, and the testing kit's moved clock in a test.
 *
 * A type without a dead-letter type costs one probe of `job_types`' primary key per job failed
 * for good.
 */
export const createDeadLetterJobV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.deadLetter}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      target text;
      failed_at timestamptz;
    BEGIN
      SELECT t.dead_letter_type INTO target
      FROM ${schema.jobTypes} t WHERE t.job_type = NEW.job_type;
      IF target IS NULL THEN
        RETURN NULL;
      END IF;
      failed_at := COALESCE(NEW.completed_at, pg_catalog.now());
      INSERT INTO ${schema.jobs}
        (job_type, data, priority, status, run_at, meta, created_at, updated_at)
      VALUES (target,
              pg_catalog.jsonb_build_object(
                'data', NEW.data,
                'error', pg_catalog.split_part(NEW.last_error, E'\\n', 1),
                'sourceJobId', NEW.id::text),
              NEW.priority, 'pending', failed_at, NEW.meta, failed_at, failed_at);
      RETURN NULL;
    END
    $$
  `;

/**
 * When a job failed for good after it ran: it becomes `failed` from anything else, having spent
 * an attempt (the completer, a transactional run's own completion, the reaper on a last attempt).
 * A job failed because a dependency failed never ran (`attempts` 0) and is not copied; neither is
 * a failed job written again (`OLD.status` failed already). Every other update is decided by this
 * clause alone, without calling the function.
 */
export const DEAD_LETTERED_WHEN = `
      NEW.status = 'failed' AND OLD.status <> 'failed' AND NEW.attempts > 0`;

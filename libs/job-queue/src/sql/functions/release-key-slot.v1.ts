import { PENDING_AGAIN_PAYLOAD, QueueSchema } from '../queue-schema';

/*
 * Which of a key's
 * jobs hold one of its slots. A claimed or running job holds one; for an ordered type, so does a
 * job that waits out the backoff of a retry, a rescue or a snooze after it was claimed (it spent
 * an attempt, or started: a snooze gives the attempt back): it keeps its key's later jobs back
 * until it completes or fails for good. A job enqueued with a delay holds nothing until it is
 * due. `o` is the job, `ordered` the type's `ordered_keys`.
 */
const holdsKeySlotSql = (ordered: string): string =>
  `(o.status IN ('claimed', 'running') OR (${ordered} AND o.status = 'scheduled'
     AND (o.attempts > 0 OR o.started_at IS NOT NULL)))`;

/**
 * The jobs (`o`) that hold a slot of the key of `owner`'s row (its `job_type` and
 * `concurrency_key`), for the claim (`claim-job-batch.v4.ts`) and the trigger function below.
 * The status list is what `jobs_key_slots_idx` is read by.
 */
export const keySlotHoldersSql = (schema: QueueSchema, owner: string, ordered: string): string => `
      SELECT o.id FROM ${schema.jobs} o
      WHERE o.job_type = ${owner}.job_type AND o.concurrency_key = ${owner}.concurrency_key
        AND o.status IN ('claimed', 'running', 'scheduled') AND ${holdsKeySlotSql(ordered)}`;

/**
 * The trigger function of `jobs_key_slot_released` (AddConcurrencyLimits, 1795939200011): a
 * keyed job gave up a slot of its key (see the trigger's WHEN clause), so as many of the key's
 * `waiting` jobs as it now has free slots go back to `pending`, best first, for the next claim.
 *
 * Jobs wait only after a claim set them aside (the key was at its limit), and that claim locked
 * every job holding a slot of the key (FOR SHARE): a release of one of them waits for the claim
 * to commit, and this function, reading with a snapshot of its own taken after that, sees the
 * jobs it set aside. So no job waits on a key that has a free slot. Rows another transaction
 * holds are skipped (SKIP LOCKED): that one is cancelling them, or moving them already.
 *
 * A type whose per-key limit was removed has its waiting jobs moved back when a worker stores
 * its limits (`storeConcurrencyLimits`); here they are left alone.
 */
export const createReleaseKeySlotV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.releaseKeySlot}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      per_key integer;
      ordered boolean;
      free_slots bigint;
    BEGIN
      -- Most releases find nothing waiting for their key: one probe of jobs_key_waiting_idx.
      -- In the index's order, so the plan reads it, however many jobs wait.
      PERFORM 1 FROM ${schema.jobs} w
      WHERE w.status = 'waiting' AND w.job_type = NEW.job_type
        AND w.concurrency_key = NEW.concurrency_key
      ORDER BY w.priority DESC, w.created_at ASC, w.id ASC
      LIMIT 1;
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      SELECT t.concurrency_per_key, t.ordered_keys INTO per_key, ordered
      FROM ${schema.jobTypes} t WHERE t.job_type = NEW.job_type;
      IF per_key IS NULL THEN
        RETURN NULL;
      END IF;
      SELECT per_key - count(*) INTO free_slots
      FROM (${keySlotHoldersSql(schema, 'NEW', 'ordered')}) AS holders;
      IF free_slots > 0 THEN
        UPDATE ${schema.jobs} AS j SET status = 'pending', updated_at = pg_catalog.now()
        WHERE j.id IN (
          SELECT w.id FROM ${schema.jobs} w
          WHERE w.status = 'waiting' AND w.job_type = NEW.job_type
            AND w.concurrency_key = NEW.concurrency_key
          ORDER BY w.priority DESC, w.created_at ASC, w.id ASC
          LIMIT free_slots
          FOR UPDATE SKIP LOCKED);
        IF FOUND THEN
          PERFORM pg_catalog.pg_notify('${schema.insertedChannel}', '${PENDING_AGAIN_PAYLOAD}');
        END IF;
      END IF;
      RETURN NULL;
    END
    $$
  `;

/**
 * When a keyed job gives up a slot: it leaves `claimed`/`running` for anything else (completed,
 * failed, cancelled, back to the queue, or a retry's backoff), or, having been claimed, it ends
 * while it waits out a backoff (cancelled there; see `holdsKeySlotSql`). Every other update, and
 * every unkeyed job, is decided by this clause alone, in the executor, without calling the
 * function.
 */
export const KEY_SLOT_RELEASED_WHEN = `
      NEW.concurrency_key IS NOT NULL AND (
        (OLD.status IN ('claimed', 'running') AND NEW.status NOT IN ('claimed', 'running'))
        OR (OLD.status = 'scheduled' AND (OLD.attempts > 0 OR OLD.started_at IS NOT NULL)
            AND NEW.status IN ('completed', 'failed', 'cancelled')))`;

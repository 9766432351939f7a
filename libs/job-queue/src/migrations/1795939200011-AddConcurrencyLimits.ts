import { QueryRunner } from 'typeorm';
import {
  replaceClaimJobBatchV2,
  replaceClaimJobBatchV3,
} from '../sql/functions/claim-job-batch.function';
import { claimJobBatchQueryV2 } from '../sql/functions/claim-job-batch.v2';
import { claimJobBatchQueryV3 } from '../sql/functions/claim-job-batch.v3';
import { claimJobBatchQueryV4 } from '../sql/functions/claim-job-batch.v4';
import {
  createReleaseKeySlotV1,
  KEY_SLOT_RELEASED_WHEN,
} from '../sql/functions/release-key-slot.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

export const STATUSES_BEFORE = `'scheduled', 'pending', 'claimed', 'running', 'completed', 'failed', 'cancelled'`;

/** The status CHECK with `statuses`: added NOT VALID, then validated without blocking writes. */
export async function replaceStatusCheck(
  queryRunner: QueryRunner,
  schema: QueueSchema,
  statuses: string,
): Promise<void> {
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} DROP CONSTRAINT jobs_status_check,
      ADD CONSTRAINT jobs_status_check CHECK (status IN (${statuses})) NOT VALID`);
  await queryRunner.query(`ALTER TABLE ${schema.jobs} VALIDATE CONSTRAINT jobs_status_check`);
}

/** The unique index over the keys of unfinished jobs, of which `statuses` are. */
async function replaceUniqueKeyIndex(
  queryRunner: QueryRunner,
  schema: QueueSchema,
  statuses: string,
): Promise<void> {
  await queryRunner.query(`DROP INDEX ${schema.quoted}.jobs_unique_key_idx`);
  await queryRunner.query(`
    CREATE UNIQUE INDEX jobs_unique_key_idx ON ${schema.jobs} (unique_key)
    WHERE unique_key IS NOT NULL AND status IN (${statuses})`);
}

const UNFINISHED_BEFORE = `'scheduled', 'pending', 'claimed', 'running'`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs}
      ADD COLUMN concurrency_key text,
      ADD CONSTRAINT jobs_concurrency_key_length_check CHECK (char_length(concurrency_key) <= 255)`);
  await replaceStatusCheck(queryRunner, schema, `${STATUSES_BEFORE}, 'waiting'`);
  // A waiting job is unfinished: it keeps its unique key. The previous release's inserts still
  // infer this index (their ON CONFLICT clause, of four statuses, implies its predicate).
  await replaceUniqueKeyIndex(queryRunner, schema, `${UNFINISHED_BEFORE}, 'waiting'`);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      ADD COLUMN concurrency_per_key integer,
      ADD COLUMN global_concurrency integer,
      ADD COLUMN ordered_keys boolean NOT NULL DEFAULT false,
      ADD COLUMN limits_updated_at timestamptz,
      ADD CONSTRAINT job_types_limits_check CHECK (
        concurrency_per_key > 0 AND global_concurrency > 0
        AND (NOT ordered_keys OR concurrency_per_key IS NOT DISTINCT FROM 1))`);
  // A key's jobs that hold or may take its slots, by key: what the claim and the trigger count
  // per key, and where a claim finds the pending jobs of a key at its limit to set aside. Only
  // keyed jobs: an unkeyed one costs no entry. `id` last keeps every entry apart: without it the
  // entries of one key and status share a posting list, which a scan cannot skip while any of
  // its versions lives, so every count read the dead versions of the key's finished jobs too.
  await queryRunner.query(`
    CREATE INDEX jobs_key_slots_idx ON ${schema.jobs} (job_type, concurrency_key, status, id)
    WHERE concurrency_key IS NOT NULL
      AND status IN ('pending', 'claimed', 'running', 'scheduled')`);
  // The jobs set aside, per key in the claim's order: the trigger moves back the best first.
  await queryRunner.query(`
    CREATE INDEX jobs_key_waiting_idx ON ${schema.jobs}
      (job_type, concurrency_key, priority DESC, created_at, id)
    WHERE status = 'waiting'`);
  await queryRunner.query(createReleaseKeySlotV1(schema));
  await queryRunner.query(`
    CREATE TRIGGER jobs_key_slot_released AFTER UPDATE OF status ON ${schema.jobs}
    FOR EACH ROW WHEN (${KEY_SLOT_RELEASED_WHEN})
    EXECUTE FUNCTION ${schema.releaseKeySlot}()`);
  await queryRunner.query(
    replaceClaimJobBatchV3(
      schema,
      claimJobBatchQueryV2(schema),
      claimJobBatchQueryV3(schema),
      claimJobBatchQueryV4(schema),
    ),
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    replaceClaimJobBatchV2(schema, claimJobBatchQueryV2(schema), claimJobBatchQueryV3(schema)),
  );
  await queryRunner.query(`DROP TRIGGER jobs_key_slot_released ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.releaseKeySlot}()`);
  // Nothing waits for a key once the limits are gone.
  await queryRunner.query(
    `UPDATE ${schema.jobs} SET status = 'pending', updated_at = now() WHERE status = 'waiting'`,
  );
  await replaceUniqueKeyIndex(queryRunner, schema, UNFINISHED_BEFORE);
  await replaceStatusCheck(queryRunner, schema, STATUSES_BEFORE);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes} DROP COLUMN concurrency_per_key, DROP COLUMN global_concurrency,
      DROP COLUMN ordered_keys, DROP COLUMN limits_updated_at`);
  await queryRunner.query(`ALTER TABLE ${schema.jobs} DROP COLUMN concurrency_key`);
}

/**
 * Concurrency limits enforced by the claim: per key (`jobs.concurrency_key`, the handler's
 * `concurrencyPerKey`, optionally `ordered`) and per type across every node
 * (`globalConcurrency`), stored in `job_types` by each worker at start.
 *
 * - `jobs.concurrency_key`, and a status `waiting`: a pending job the claim set aside because its
 *   key was at its limit, out of `jobs_claim_idx`, so a key's backlog costs the claim nothing
 *   while the key is busy. The trigger `jobs_key_slot_released` moves a key's waiting jobs back
 *   to `pending` as its slots free up.
 * - `job_types.concurrency_per_key`, `global_concurrency`, `ordered_keys`, `limits_updated_at`.
 * - `claim_job_batch` takes a lock per limited type before it reads, so claims of one limited
 *   type take turns across every node and count what runs exactly.
 *
 * Additive: the previous release's workers claim through the new body (so they keep to the limits
 * the new workers stored), and store no limits and enqueue without keys. `down()`
 * moves every waiting job back to `pending`.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addConcurrencyLimitsFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddConcurrencyLimits', 1795939200011, schema, up, down);
}

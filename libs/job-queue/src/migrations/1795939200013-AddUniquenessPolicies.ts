import { QueryRunner } from 'typeorm';
import { createUniqueStateCountsV1 } from '../sql/functions/unique-state-counts.v1';
import { QueueSchema } from '../sql/queue-schema';
import { uniqueKeyCountsSql } from '../sql/unique-keys.sql';
import { MigrationClass, schemaMigration } from './schema-migration';

/** The length CHECK of stored keys: a caller's 255 characters, and room for a folded window. */
async function replaceUniqueKeyLengthCheck(
  queryRunner: QueryRunner,
  schema: QueueSchema,
  maxLength: number,
): Promise<void> {
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} DROP CONSTRAINT jobs_unique_key_length_check,
      ADD CONSTRAINT jobs_unique_key_length_check CHECK (char_length(unique_key) <= ${maxLength})
      NOT VALID`);
  await queryRunner.query(
    `ALTER TABLE ${schema.jobs} VALIDATE CONSTRAINT jobs_unique_key_length_check`,
  );
}

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // NULL (every row so far): the unfinished statuses, as before. No rewrite, no backfill.
  await queryRunner.query(`ALTER TABLE ${schema.jobs} ADD COLUMN unique_states smallint`);
  // 255 + U+001F + a window's start (24) + '/' + its length in ms (at most 16 digits).
  await replaceUniqueKeyLengthCheck(queryRunner, schema, 297);
  await queryRunner.query(createUniqueStateCountsV1(schema));
  await queryRunner.query(`DROP INDEX ${schema.quoted}.jobs_unique_key_idx`);
  await queryRunner.query(`
    CREATE UNIQUE INDEX jobs_unique_key_idx ON ${schema.jobs} (unique_key)
    WHERE ${uniqueKeyCountsSql(schema)}`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP INDEX ${schema.quoted}.jobs_unique_key_idx`);
  // Keys that count in finished statuses stop counting there; among unfinished jobs every
  // stored key is still one job's, windows included, so the index builds.
  await queryRunner.query(`
    CREATE UNIQUE INDEX jobs_unique_key_idx ON ${schema.jobs} (unique_key)
    WHERE unique_key IS NOT NULL
      AND status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')`);
  await queryRunner.query(`DROP FUNCTION ${schema.uniqueStateCounts}(smallint, text)`);
  // A key stored with its window is longer than a caller's: those jobs keep their keys, and
  // only new rows are held to 255 again (the constraint stays NOT VALID).
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} DROP CONSTRAINT jobs_unique_key_length_check,
      ADD CONSTRAINT jobs_unique_key_length_check CHECK (char_length(unique_key) <= 255)
      NOT VALID`);
  await queryRunner.query(`ALTER TABLE ${schema.jobs} DROP COLUMN unique_states`);
}

/**
 * Uniqueness policies (`uniqueStates`, `uniqueForMs`, `debounceMs`, `throttleMs`), enforced by
 * the unique index, never by a read before a write:
 *
 * - `jobs.unique_states`: the statuses a row's key counts in, one bit per status (NULL: the
 *   unfinished ones, as before).
 * - `job_unique_state_counts(states, status)`: immutable, so the index's predicate calls it.
 * - `jobs_unique_key_idx` over `unique_key` where the row's key counts in its status. A window
 *   (`uniqueForMs`, `throttleMs`) is folded into the stored key, since an index cannot read
 *   now(); the length CHECK makes room for it.
 *
 * Additive: the previous release's inserts still infer the index (their ON CONFLICT clause, of
 * the unfinished statuses, implies its predicate) and store rows as before. `down()` puts the
 * index over unfinished jobs back.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addUniquenessPoliciesFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddUniquenessPolicies', 1795939200013, schema, up, down);
}

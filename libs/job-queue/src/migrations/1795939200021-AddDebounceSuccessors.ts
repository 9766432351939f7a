import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // One successor a key: a blocked job with a key is only ever a debounce's successor (`dependsOn`
  // refuses a key), and `jobs_unique_key_idx` leaves `blocked` out, so without this index two
  // callers could each add one. Blocked keyed jobs are few: the index is small and only their
  // writes pay for it. IF NOT EXISTS: on a big table, build it by hand first with CREATE UNIQUE
  // INDEX CONCURRENTLY (same name and definition), and this migration skips it.
  await queryRunner.query(`
    CREATE UNIQUE INDEX IF NOT EXISTS jobs_successor_key_idx ON ${schema.jobs} (unique_key)
      WHERE status = 'blocked' AND unique_key IS NOT NULL
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP INDEX IF EXISTS ${schema.quoted}.jobs_successor_key_idx`);
}

/**
 * `jobs_successor_key_idx`: at most one debounce successor a unique key (see
 * sql/insert-successor-jobs.query.ts). A successor waits `blocked` on the key's running holder
 * through the dependency triggers, and takes the key in `jobs_unique_key_idx` in the statement
 * that finishes the holder.
 *
 * Additive: the previous release neither writes successors nor reads the index; its workers
 * finish a holder through the same trigger that releases its successor.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addDebounceSuccessorsFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddDebounceSuccessors', 1795939200021, schema, up, down);
}

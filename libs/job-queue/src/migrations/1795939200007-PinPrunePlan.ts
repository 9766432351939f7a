import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

/** `prune_jobs()` by its signature, as ALTER FUNCTION names it: the checked schema, fixed types. */
const PRUNE_JOBS_SIGNATURE = (schema: QueueSchema): string =>
  `${schema.quoted}.prune_jobs(bigint, float8, float8, float8, float8, text[], text[], integer)`;

// ALTER FUNCTION keeps the body, the owner and the grants (no EXECUTE for PUBLIC).
async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    `ALTER FUNCTION ${PRUNE_JOBS_SIGNATURE(schema)}
       SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off`,
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    `ALTER FUNCTION ${PRUNE_JOBS_SIGNATURE(schema)}
       RESET enable_hashjoin RESET enable_mergejoin RESET enable_bitmapscan`,
  );
}

/**
 * `prune_jobs()` gains the claim's join settings: nested loops only, no bitmap scans. The
 * statement, its owner and its grants are unchanged.
 *
 * Why: planned generically (as a plpgsql function's statement is after a few calls), the batch
 * limit is a parameter, so the planner guesses thousands of old rows, and PostgreSQL 17 then
 * deleted them through a hash join over a sequential scan of the whole table, every batch
 * (seen on a million finished rows; PostgreSQL 15 kept the nested loop over the primary key).
 * Every join in the statement is a batch of rows at most, each found by index.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function pinPrunePlanFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('PinPrunePlan', 1795939200007, schema, up, down);
}

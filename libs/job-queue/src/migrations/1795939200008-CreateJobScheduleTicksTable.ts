import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // One row at most: the primary key is a boolean that must be true.
  await queryRunner.query(`
    CREATE TABLE ${schema.jobScheduleTicks} (
      id            boolean PRIMARY KEY DEFAULT true,
      ticking_since timestamptz NOT NULL,
      ticked_at     timestamptz NOT NULL,
      CONSTRAINT job_schedule_ticks_one_row_check CHECK (id)
    )
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TABLE ${schema.jobScheduleTicks}`);
}

/**
 * `job_schedule_ticks`: when the workers' cron ticks ran, so that a tick can tell a fire time
 * that came while workers were ticking (late: the ticks fell behind; it still gets its job) from
 * one that came while none was (missed: `catchUp` decides). One row, written at the start and the
 * end of every tick by every node, on the database's clock: `ticked_at` the latest moment a node
 * was known ticking, `ticking_since` the start of the current run of ticks without a gap (see
 * `startCronTick`). No row until the first tick.
 *
 * Additive: workers of the previous release ignore it. The runtime role needs SELECT, INSERT and
 * UPDATE on it (README, "Database roles").
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function createJobScheduleTicksTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobScheduleTicksTable', 1795939200008, schema, up, down);
}

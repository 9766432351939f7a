import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    CREATE TABLE ${schema.jobTypes} (
      job_type   text PRIMARY KEY,
      paused_at  timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT job_types_job_type_length_check CHECK (char_length(job_type) <= 255)
    )
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TABLE ${schema.jobTypes}`);
}

/**
 * `job_types`: settings of a job type that every node must see alike, one row per type that has
 * any (a type with no row has the defaults): `paused_at` (set while the type is paused: no node
 * claims it). Later migrations add columns here rather than new per-type tables.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function createJobTypesTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobTypesTable', 1795939200002, schema, up, down);
}

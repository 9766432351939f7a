import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // Nullable and without a default: PostgreSQL adds the column without rewriting the table.
  await queryRunner.query(`ALTER TABLE ${schema.jobs} ADD COLUMN meta jsonb`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`ALTER TABLE ${schema.jobs} DROP COLUMN meta`);
}

/**
 * `jobs.meta`: per-job context captured at enqueue (the module's `context` hooks, the trace
 * context of `nest-pg-job-queue/opentelemetry`) and restored around each run. Its size is
 * bounded by the module's `maxMetaBytes` at enqueue, as `data`'s is by `maxPayloadBytes`.
 *
 * Additive: `claim_job_batch()` returns the table's rows (`RETURNING jobs.*`), so it returns
 * the column without being replaced; the previous release's workers read the rows by name and
 * skip it, and insert none.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addJobMetaFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddJobMeta', 1795939200015, schema, up, down);
}

import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // One row at most: the primary key is a boolean that must be true.
  await queryRunner.query(`
    CREATE TABLE ${schema.jobStats} (
      id           boolean PRIMARY KEY DEFAULT true,
      counts       jsonb NOT NULL,
      refreshed_at timestamptz NOT NULL,
      count_ms     double precision NOT NULL,
      CONSTRAINT job_stats_one_row_check CHECK (id),
      CONSTRAINT job_stats_count_ms_check CHECK (count_ms >= 0)
    )
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TABLE ${schema.jobStats}`);
}

/**
 * `job_stats`: the last count of jobs by type and status, so that `stats()` reads one row instead
 * of the whole jobs table. `counts` is `{ "<type>": { "<status>": n } }` (statuses with no jobs
 * absent), `refreshed_at` the moment the count's snapshot was taken (the counting statement's
 * start), `count_ms` how long the count took: the next refresh waits at least ten times that.
 * No row until the first count.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function createJobStatsTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobStatsTable', 1795939200004, schema, up, down);
}

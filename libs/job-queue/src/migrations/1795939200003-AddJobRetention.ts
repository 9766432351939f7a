import { QueryRunner } from 'typeorm';
import { createPruneJobsV1 } from '../sql/functions/prune-jobs.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // A handler's retention, stored by the worker that has the handler so that every node prunes
  // its type alike. `retention_updated_at` NULL: no handler stored one (say, the row is there
  // only because the type was paused); the pruning node's module default applies. Set, a NULL
  // column keeps that status forever.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      ADD COLUMN completed_retention_ms bigint,
      ADD COLUMN failed_retention_ms bigint,
      ADD COLUMN cancelled_retention_ms bigint,
      ADD COLUMN retention_updated_at timestamptz,
      ADD CONSTRAINT job_types_retention_check CHECK (
        completed_retention_ms >= 0 AND failed_retention_ms >= 0 AND cancelled_retention_ms >= 0)
  `);
  // The pruner's way to the old finished rows of one type and status, oldest first, without
  // reading the rest of the table. Only finished rows are in it, so it costs one index entry per
  // job, written when the job finishes. IF NOT EXISTS: on a big table, build it by hand first
  // with CREATE INDEX CONCURRENTLY (same name and definition), and this migration skips it.
  await queryRunner.query(`
    CREATE INDEX IF NOT EXISTS jobs_finished_idx ON ${schema.jobs} (job_type, status, completed_at)
      WHERE status IN ('completed', 'failed', 'cancelled')
  `);
  // A queue table's rows are short-lived: each job leaves about three dead row versions (claim,
  // finish, prune). With the defaults (vacuum once dead rows pass 20% of the table) a busy table
  // carries a fifth of its size in dead rows and dead index entries; 5% keeps that small. Only
  // autovacuum's trigger changes: no rewrite, and a brief SHARE UPDATE EXCLUSIVE lock.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} SET (
      autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
      autovacuum_analyze_scale_factor = 0.05, autovacuum_analyze_threshold = 1000)
  `);
  await queryRunner.query(createPruneJobsV1(schema));
  await queryRunner.query(
    `REVOKE ALL ON FUNCTION ${schema.quoted}.prune_jobs(bigint, float8, float8, float8, float8,
       text[], text[], integer) FROM PUBLIC`,
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    `DROP FUNCTION ${schema.quoted}.prune_jobs(bigint, float8, float8, float8, float8, text[],
       text[], integer)`,
  );
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} RESET (
      autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
      autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)
  `);
  await queryRunner.query(`DROP INDEX IF EXISTS ${schema.quoted}.jobs_finished_idx`);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      DROP CONSTRAINT job_types_retention_check,
      DROP COLUMN completed_retention_ms,
      DROP COLUMN failed_retention_ms,
      DROP COLUMN cancelled_retention_ms,
      DROP COLUMN retention_updated_at
  `);
}

/**
 * Retention: per-type retention columns on `job_types` (written by workers for their handlers),
 * `jobs_finished_idx` and `prune_jobs()` (see `pruneJobsQueryV1` in sql/functions/prune-jobs.v1.ts) for the pruner, and autovacuum
 * settings for a table whose rows come and go (see the README's "Retention").
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addJobRetentionFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddJobRetention', 1795939200003, schema, up, down);
}

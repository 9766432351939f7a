import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // `listJobs` by type and status, newest first: a page is the next entries below the cursor, of
  // one (type, status), or of each status of a type, or of each type in a status, merged. One
  // entry per row version, so it costs every write that makes one: not the claim's, whose
  // `claimed` and `running` versions it leaves out (a worker's jobs in flight are few, and
  // `jobs_lease_idx` lists them), so a job's run adds one entry, at its outcome. IF NOT EXISTS:
  // on a big table, build it by hand first with CREATE INDEX CONCURRENTLY (same name and
  // definition), and this migration skips it.
  await queryRunner.query(`
    CREATE INDEX IF NOT EXISTS jobs_list_idx ON ${schema.jobs} (job_type, status, id)
      WHERE status NOT IN ('claimed', 'running')
  `);
  // `listJobs({ uniqueKeyPrefix })`: unfinished jobs' keys in byte order (COLLATE "C"), so a
  // LIKE 'prefix%' in that collation is a range of it whatever the database's collation;
  // `jobs_unique_key_idx` sorts by the database's, which serves such a range only under "C". The
  // lookups of a key (uniqueness, debounce) compare in the database's collation and so keep
  // to `jobs_unique_key_idx`. Only keyed jobs that are not finished have entries.
  await queryRunner.query(`
    CREATE INDEX IF NOT EXISTS jobs_unique_key_prefix_idx
      ON ${schema.jobs} (unique_key COLLATE "C")
      WHERE unique_key IS NOT NULL
        AND status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP INDEX IF EXISTS ${schema.quoted}.jobs_unique_key_prefix_idx`);
  await queryRunner.query(`DROP INDEX IF EXISTS ${schema.quoted}.jobs_list_idx`);
}

/**
 * The indexes of `QueueService.listJobs` (see sql/list-jobs.query.ts): `jobs_list_idx` over
 * `(job_type, status, id)` of jobs not in flight for its type and status filters, and
 * `jobs_unique_key_prefix_idx` for its unique-key prefix among unfinished jobs. Unfiltered pages
 * read the primary key; jobs in flight come from `jobs_lease_idx`.
 *
 * Additive: the previous release neither reads nor needs them.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addJobListIndexesFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddJobListIndexes', 1795939200016, schema, up, down);
}

import { QueryRunner } from 'typeorm';
import { FINISHED_STATUSES } from '../sql/functions/resolve-dependants.v1';
import {
  createReopenDependantsV1,
  DEPENDENCY_REOPENED_WHEN,
} from '../sql/functions/reopen-dependants.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(createReopenDependantsV1(schema));
  await queryRunner.query(`
    CREATE TRIGGER jobs_dependency_reopened AFTER UPDATE OF status ON ${schema.jobs}
    FOR EACH ROW WHEN (${DEPENDENCY_REOPENED_WHEN})
    EXECUTE FUNCTION ${schema.reopenDependants}()`);
  // A blocked job that an earlier release counted short (a dependency that finished, was
  // retried and finished again) gets its count from its edges; a count of 0 would leave it
  // blocked for good, so only counts above 0 are written (none can be 0 while it is blocked).
  await queryRunner.query(`
    UPDATE ${schema.jobs} AS w SET unfinished_dependencies = counted.n, updated_at = now()
    FROM (
      SELECT e.job_id, count(*) FILTER (WHERE d.status NOT IN (${FINISHED_STATUSES})) AS n
      FROM ${schema.jobDependencies} e
        JOIN ${schema.jobs} blocked ON blocked.id = e.job_id AND blocked.status = 'blocked'
        JOIN ${schema.jobs} d ON d.id = e.dependency_id
      GROUP BY e.job_id
    ) AS counted
    WHERE w.id = counted.job_id AND w.status = 'blocked'
      AND counted.n > 0 AND w.unfinished_dependencies <> counted.n`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TRIGGER jobs_dependency_reopened ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.reopenDependants}()`);
}

/**
 * Each dependency counted once: the trigger `jobs_dependency_reopened` makes the blocked
 * dependants of a finished job that runs again (retry, redrive) wait for it again (see
 * `createReopenDependantsV1`), so finishing again takes off only what the reopen added. Blocked
 * jobs already counted short are recounted from their edges.
 *
 * Additive: the previous release's retries and redrives go through the trigger too. `down()`
 * drops it; counts stay as they are.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function countEachDependencyOnceFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CountEachDependencyOnce', 1795939200019, schema, up, down);
}

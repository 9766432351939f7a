import { QueryRunner } from 'typeorm';
import {
  createKeepDependenciesV1,
  createResolveDependantsV1,
  DEPENDENCIES_DELETED_WHEN,
  DEPENDENCY_FINISHED_WHEN,
} from '../sql/functions/resolve-dependants.v1';
import { QueueSchema } from '../sql/queue-schema';
import { replaceStatusCheck, STATUSES_BEFORE } from './1795939200011-AddConcurrencyLimits';
import { MigrationClass, schemaMigration } from './schema-migration';

const STATUSES_WITH_WAITING = `${STATUSES_BEFORE}, 'waiting'`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // Every new column is NULL or has a constant default: adding them rewrites nothing.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs}
      ADD COLUMN flow_id uuid,
      ADD COLUMN step_name text,
      ADD COLUMN unfinished_dependencies integer NOT NULL DEFAULT 0,
      ADD COLUMN on_dependency_failure text,
      ADD COLUMN has_dependants boolean NOT NULL DEFAULT false,
      ADD CONSTRAINT jobs_step_name_length_check CHECK (char_length(step_name) <= 255),
      ADD CONSTRAINT jobs_dependencies_check CHECK (
        unfinished_dependencies >= 0
        AND on_dependency_failure IN ('fail', 'continue'))`);
  await replaceStatusCheck(queryRunner, schema, `${STATUSES_WITH_WAITING}, 'blocked'`);
  // One row per edge: `job_id` waits for `dependency_id`. By dependency for the trigger that
  // moves a finished job's dependants on; by dependant for `dependencyResults()` and for the
  // edges a deleted dependant takes with it. No foreign keys: their triggers would run for
  // every job deleted by retention, flows or not; `jobs_dependencies_kept` does their work for
  // the jobs that have edges only.
  await queryRunner.query(`
    CREATE TABLE ${schema.jobDependencies} (
      dependency_id bigint NOT NULL,
      job_id bigint NOT NULL,
      PRIMARY KEY (dependency_id, job_id)
    )`);
  await queryRunner.query(`
    CREATE INDEX job_dependencies_job_idx ON ${schema.jobDependencies} (job_id, dependency_id)`);
  // `cancelFlow(flowId)`: a flow's jobs. Jobs outside a flow have no entry.
  await queryRunner.query(`
    CREATE INDEX jobs_flow_idx ON ${schema.jobs} (flow_id) WHERE flow_id IS NOT NULL`);
  await queryRunner.query(createResolveDependantsV1(schema));
  await queryRunner.query(`
    CREATE TRIGGER jobs_dependency_finished AFTER UPDATE OF status ON ${schema.jobs}
    FOR EACH ROW WHEN (${DEPENDENCY_FINISHED_WHEN})
    EXECUTE FUNCTION ${schema.resolveDependants}()`);
  await queryRunner.query(createKeepDependenciesV1(schema));
  await queryRunner.query(`
    CREATE TRIGGER jobs_dependencies_kept BEFORE DELETE ON ${schema.jobs}
    FOR EACH ROW WHEN (${DEPENDENCIES_DELETED_WHEN})
    EXECUTE FUNCTION ${schema.keepDependencies}()`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TRIGGER jobs_dependencies_kept ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.keepDependencies}()`);
  await queryRunner.query(`DROP TRIGGER jobs_dependency_finished ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.resolveDependants}()`);
  // Without dependencies nothing is blocked: what waited becomes due.
  await queryRunner.query(`
    UPDATE ${schema.jobs} SET status = 'pending', updated_at = now() WHERE status = 'blocked'`);
  await replaceStatusCheck(queryRunner, schema, STATUSES_WITH_WAITING);
  await queryRunner.query(`DROP TABLE ${schema.jobDependencies}`);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobs} DROP COLUMN flow_id, DROP COLUMN step_name,
      DROP COLUMN unfinished_dependencies, DROP COLUMN on_dependency_failure,
      DROP COLUMN has_dependants`);
}

/**
 * Jobs that wait for other jobs (`dependsOn`, `QueueService.flow`):
 *
 * - a status `blocked`: the job has unfinished dependencies. It is in none of the claim's
 *   indexes, so a million blocked jobs cost the claim nothing.
 * - `jobs.unfinished_dependencies`, `on_dependency_failure` (`fail` or `continue`, set on every
 *   job that has dependencies), `has_dependants` (set on a job once something depends on it),
 *   `flow_id` and `step_name` (a flow's jobs and their names in it).
 * - `job_dependencies`, the edges.
 * - The trigger `jobs_dependency_finished`: a job with dependants finished, so they move on in
 *   the same statement (see `createResolveDependantsV1`). `jobs_dependencies_kept`: a finished
 *   job is not deleted while a job that depends on it is unfinished.
 *
 * Additive: the previous release never writes these columns, and its workers finish jobs through
 * the same triggers. `down()` makes every blocked job due.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addJobDependenciesFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddJobDependencies', 1795939200017, schema, up, down);
}

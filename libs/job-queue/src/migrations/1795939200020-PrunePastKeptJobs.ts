import { QueryRunner } from 'typeorm';
import { PRUNE_JOBS_V2_ARGUMENTS } from '../sql/functions/prune-jobs.v2';
import { createPruneJobsV3, PRUNE_JOBS_V3_ARGUMENTS } from '../sql/functions/prune-jobs.v3';
import { QueueSchema } from '../sql/queue-schema';
import { copyExecuteGrants } from './copy-execute-grants';
import { MigrationClass, schemaMigration } from './schema-migration';

const signature = (schema: QueueSchema, argumentTypes: string): string =>
  `${schema.quoted}.prune_jobs(${argumentTypes})`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(createPruneJobsV3(schema));
  await queryRunner.query(
    copyExecuteGrants(
      signature(schema, PRUNE_JOBS_V2_ARGUMENTS),
      signature(schema, PRUNE_JOBS_V3_ARGUMENTS),
    ),
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP FUNCTION ${signature(schema, PRUNE_JOBS_V3_ARGUMENTS)}`);
}

/**
 * A third `prune_jobs()` signature, with a cursor (`pruneJobsQueryV3` in
 * sql/functions/prune-jobs.v3.ts): each page resumes after the last row the previous one read,
 * and counts the rows it keeps for their unfinished dependants instead of reading them again,
 * so a pass gets past them. It gets the second signature's EXECUTE grants. The second stays:
 * the previous release's pruners call it (and still stop at the kept rows). `down()` drops the
 * third.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function prunePastKeptJobsFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('PrunePastKeptJobs', 1795939200020, schema, up, down);
}

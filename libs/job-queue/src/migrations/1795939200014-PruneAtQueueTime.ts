import { QueryRunner } from 'typeorm';
import { createPruneJobsV1 } from '../sql/functions/prune-jobs.v1';
import {
  createPruneJobsV2,
  PRUNE_JOBS_V1_ARGUMENTS,
  PRUNE_JOBS_V2_ARGUMENTS,
} from '../sql/functions/prune-jobs.v2';
import { QueueSchema } from '../sql/queue-schema';
import { copyExecuteGrants } from './copy-execute-grants';
import { MigrationClass, schemaMigration } from './schema-migration';

const signature = (schema: QueueSchema, argumentTypes: string): string =>
  `${schema.quoted}.prune_jobs(${argumentTypes})`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  const before = signature(schema, PRUNE_JOBS_V1_ARGUMENTS);
  const after = signature(schema, PRUNE_JOBS_V2_ARGUMENTS);
  await queryRunner.query(createPruneJobsV2(schema));
  await queryRunner.query(copyExecuteGrants(before, after));
  await queryRunner.query(`DROP FUNCTION ${before}`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  const before = signature(schema, PRUNE_JOBS_V1_ARGUMENTS);
  const after = signature(schema, PRUNE_JOBS_V2_ARGUMENTS);
  await queryRunner.query(createPruneJobsV1(schema));
  // The settings PinPrunePlan gave the first signature.
  await queryRunner.query(
    `ALTER FUNCTION ${before}
       SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off`,
  );
  await queryRunner.query(copyExecuteGrants(after, before));
  await queryRunner.query(`DROP FUNCTION ${after}`);
}

/**
 * `prune_jobs()` takes the queue's time as a last parameter, `p_now` (`pruneJobsQueryV2` in
 * sql/functions/prune-jobs.v2.ts): the testing kit prunes at the time it moved the queue to;
 * in production it is NULL and retention counts back from now(), as before. A new parameter is
 * a new signature: the first one is dropped and the new one gets its EXECUTE grants. `p_now`
 * defaults to NULL, so the previous release's pruners, which pass eight arguments, resolve to
 * the new function and prune as before. `down()` puts the first signature back, with its
 * settings and the grants.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function pruneAtQueueTimeFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('PruneAtQueueTime', 1795939200014, schema, up, down);
}

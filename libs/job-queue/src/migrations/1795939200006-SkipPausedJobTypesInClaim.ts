import { QueryRunner } from 'typeorm';
import { replaceClaimJobBatch } from '../sql/functions/claim-job-batch.function';
import { claimJobBatchQueryV1 } from '../sql/functions/claim-job-batch.v1';
import { claimJobBatchQueryV2 } from '../sql/functions/claim-job-batch.v2';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(replaceClaimJobBatch(schema, claimJobBatchQueryV2(schema)));
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(replaceClaimJobBatch(schema, claimJobBatchQueryV1(schema)));
}

/**
 * `claim_job_batch` skips paused job types (`job_types.paused_at`, see `claimJobBatchQueryV2`):
 * `QueueService.pause(type)` / `resume(type)` act on every node at its next claim. Same
 * signature and contract otherwise; `down()` puts `claimJobBatchQueryV1` back.
 *
 * The role the workers connect as now needs SELECT on `job_types` (see the README's runtime role).
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function skipPausedJobTypesInClaimFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('SkipPausedJobTypesInClaim', 1795939200006, schema, up, down);
}

import { QueryRunner } from 'typeorm';
import {
  CLAIM_JOB_BATCH_ARGUMENTS_V1,
  CLAIM_JOB_BATCH_ARGUMENTS_V2,
  createClaimJobBatch,
  createClaimJobBatchV2,
} from '../sql/functions/claim-job-batch.function';
import { claimJobBatchQueryV2 } from '../sql/functions/claim-job-batch.v2';
import { claimJobBatchQueryV3 } from '../sql/functions/claim-job-batch.v3';
import { QueueSchema } from '../sql/queue-schema';
import { copyExecuteGrants } from './copy-execute-grants';
import { MigrationClass, schemaMigration } from './schema-migration';

const signature = (schema: QueueSchema, argumentTypes: string): string =>
  `${schema.claimJobBatch}(${argumentTypes})`;

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  const before = signature(schema, CLAIM_JOB_BATCH_ARGUMENTS_V1);
  const after = signature(schema, CLAIM_JOB_BATCH_ARGUMENTS_V2);
  await queryRunner.query(
    createClaimJobBatchV2(schema, claimJobBatchQueryV2(schema), claimJobBatchQueryV3(schema)),
  );
  await queryRunner.query(copyExecuteGrants(before, after));
  await queryRunner.query(`DROP FUNCTION ${before}`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  const before = signature(schema, CLAIM_JOB_BATCH_ARGUMENTS_V1);
  const after = signature(schema, CLAIM_JOB_BATCH_ARGUMENTS_V2);
  await queryRunner.query(createClaimJobBatch(schema, claimJobBatchQueryV2(schema)));
  await queryRunner.query(copyExecuteGrants(after, before));
  await queryRunner.query(`DROP FUNCTION ${after}`);
}

/**
 * `claim_job_batch` resumes each type and priority where the caller's last claim of it ended
 * (`claimJobBatchQueryV3`, run when the call passes cursors; without, `claimJobBatchQueryV2` as
 * before), so a claim no longer walks the index entries of the jobs claimed
 * before it that VACUUM has not removed yet (all of them, while a snapshot is held elsewhere).
 * The function gains four optional parameters, so it is a new signature: the old one is dropped
 * and the new one gets its EXECUTE grants. Calls that pass none of the new parameters (the seed's
 * three arguments, or an older worker's) resolve to the new function and claim as before.
 * `down()` puts back the first signature with `claimJobBatchQueryV2`, and the grants with it.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function resumeClaimsAtCursorsFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('ResumeClaimsAtCursors', 1795939200009, schema, up, down);
}

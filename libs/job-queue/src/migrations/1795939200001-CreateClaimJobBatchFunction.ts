import { QueryRunner } from 'typeorm';
import { createClaimJobBatch } from '../sql/functions/claim-job-batch.function';
import { claimJobBatchQueryV1 } from '../sql/functions/claim-job-batch.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    CREATE INDEX jobs_claim_idx ON ${schema.jobs} (job_type, priority DESC, created_at ASC, id ASC)
      WHERE status = 'pending'
  `);
  await queryRunner.query(createClaimJobBatch(schema, claimJobBatchQueryV1(schema)));
  // Callable by the roles it is granted to (see the README's runtime role), not by every role.
  await queryRunner.query(
    `REVOKE ALL ON FUNCTION ${CLAIM_JOB_BATCH_SIGNATURE(schema)} FROM PUBLIC`,
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP FUNCTION ${CLAIM_JOB_BATCH_SIGNATURE(schema)}`);
  await queryRunner.query(`DROP INDEX ${schema.quoted}.jobs_claim_idx`);
}

const CLAIM_JOB_BATCH_SIGNATURE = (schema: QueueSchema): string =>
  `${schema.claimJobBatch}(text, text[], integer, timestamptz, boolean, integer[], integer[],
     integer[], integer[], float8[])`;

/**
 * `claim_job_batch(p_worker_id, p_job_types, p_batch_size)`, the seed's signature and contract
 * (status 'claimed', priority DESC then created_at then id across every type given), plus
 * optional `p_now`, `p_start`, per-type caps and policy (see `claimJobBatchQueryV1`); and the
 * partial index the claim walks: led by job_type, then exactly the claim's order, over pending
 * rows only, so each type's head is a few index entries however many finished rows, jobs of
 * other types or jobs due later (`scheduled`, see `jobs_scheduled_idx`) the table holds.
 */
export function createClaimJobBatchFunctionFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateClaimJobBatchFunction', 1795939200001, schema, up, down);
}

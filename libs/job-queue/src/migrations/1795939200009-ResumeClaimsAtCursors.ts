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
import { MigrationClass, schemaMigration } from './schema-migration';

const signature = (schema: QueueSchema, argumentTypes: string): string =>
  `${schema.claimJobBatch}(${argumentTypes})`;

/**
 * Gives `to` every EXECUTE grant `from` has (the app's runtime role, see the README's database
 * roles), with its grant option, and none to PUBLIC unless `from` had one. A new signature is a
 * new function: without this, a runtime role granted the old one could no longer claim.
 */
const copyExecuteGrants = (from: string, to: string): string => `
    DO $grants$
    DECLARE
      granted record;
    BEGIN
      EXECUTE 'REVOKE ALL ON FUNCTION ${to} FROM PUBLIC';
      FOR granted IN
        SELECT acl.grantee, acl.is_grantable
        FROM pg_catalog.pg_proc p,
             pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) acl
        WHERE p.oid = '${from}'::pg_catalog.regprocedure AND acl.privilege_type = 'EXECUTE'
      LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION ${to} TO %s%s',
          CASE WHEN granted.grantee = 0::pg_catalog.oid THEN 'PUBLIC'
               ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(granted.grantee)) END,
          CASE WHEN granted.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
      END LOOP;
    END
    $grants$`;

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

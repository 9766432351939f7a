import { claimJobBatchQueryV1 } from '../../libs/job-queue/src/sql/functions/claim-job-batch.v1';
import { claimJobBatchQueryV2 } from '../../libs/job-queue/src/sql/functions/claim-job-batch.v2';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import {
  queueFunction,
  undoMigrationsThrough,
  useUnmigratedDataSource,
} from '../support/migrations';

/**
 * SkipPausedJobTypesInClaim replaces claim_job_batch's body in place: V2 up, V1 down, with the
 * same settings, owner and grants (no EXECUTE for PUBLIC) either way.
 */
describe('migration SkipPausedJobTypesInClaim', () => {
  const dataSource = useUnmigratedDataSource();
  const schema = queueSchema('job_queue');
  const claimFunction = () => queueFunction(dataSource(), 'claim_job_batch');
  const bodyOf = (query: string) => expect.stringContaining(`RETURN QUERY ${query};`);

  // ResumeClaimsAtCursors (after it) replaces the function again: each check undoes it first.
  const migrateThroughV2 = async () => {
    await dataSource().runMigrations();
    await undoMigrationsThrough(dataSource(), 'ResumeClaimsAtCursors1795939200009');
  };

  it('installs V2 and puts V1 back on the way down, keeping settings and grants', async () => {
    await migrateThroughV2();
    const v2 = await claimFunction();
    expect(v2.body).toEqual(bodyOf(claimJobBatchQueryV2(schema)));
    expect(v2.acl).not.toMatch(/(^|[{,])=X/); // no EXECUTE for PUBLIC

    await undoMigrationsThrough(dataSource(), 'SkipPausedJobTypesInClaim1795939200006');
    const v1 = await claimFunction();
    expect(v1.body).toEqual(bodyOf(claimJobBatchQueryV1(schema)));
    expect(v1.body).not.toContain('job_types');
    expect({ ...v1, body: '' }).toEqual({ ...v2, body: '' });
    expect(v1.settings).toEqual([
      'search_path=pg_catalog, pg_temp',
      'enable_bitmapscan=off',
      'enable_sort=off',
      'jit=off',
      'enable_hashjoin=off',
      'enable_mergejoin=off',
    ]);

    await migrateThroughV2();
    expect(await claimFunction()).toEqual(v2);
  });
});

import { DataSource } from 'typeorm';
import {
  currentClaimFromHeadsQuery,
  currentClaimJobBatchQuery,
  currentLimitedClaimQuery,
  currentPruneJobsQuery,
} from '../../libs/job-queue/src/sql/functions/current-functions';
import { PRUNE_JOBS_V3_ARGUMENTS } from '../../libs/job-queue/src/sql/functions/prune-jobs.v3';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { createTestDatabase, TestDatabase } from '../support/database';
import { queueFunction } from '../support/migrations';

/**
 * current-functions.ts names the statement each function of a migrated database runs: the plan
 * tests EXPLAIN that text, and a reader looks it up there.
 */
describe('current SQL functions', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const schema = queueSchema('job_queue');
  const runs = (query: string) => expect.stringContaining(`RETURN QUERY ${query};`);

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource({ type: 'postgres', url: db.url });
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('claim_job_batch runs currentLimitedClaimQuery for a limited type, else currentClaimJobBatchQuery with cursors, currentClaimFromHeadsQuery without', async () => {
    const { body } = await queueFunction(dataSource, 'claim_job_batch');
    expect(body).toEqual(runs(currentLimitedClaimQuery(schema)));
    expect(body).toEqual(runs(currentClaimJobBatchQuery(schema)));
    expect(body).toEqual(runs(currentClaimFromHeadsQuery(schema)));
  });

  it('prune_jobs runs currentPruneJobsQuery', async () => {
    const { body } = await queueFunction(dataSource, 'prune_jobs', PRUNE_JOBS_V3_ARGUMENTS);
    expect(body).toEqual(runs(currentPruneJobsQuery(schema)));
  });
});

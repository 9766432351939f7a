import { MigrationInterface } from 'typeorm';
import { CreateJobsTable1795939200000 } from './1795939200000-CreateJobsTable';
import { CreateClaimJobBatchFunction1795939200001 } from './1795939200001-CreateClaimJobBatchFunction';

/**
 * The job queue's migrations in the order they must run. Add them to your DataSource:
 * `migrations: [...jobQueueMigrations, ...yourOwn]`.
 *
 * @publicApi
 */
export const jobQueueMigrations: Array<new () => MigrationInterface> = [
  CreateJobsTable1795939200000,
  CreateClaimJobBatchFunction1795939200001,
];

/** The claim statement the newest migration installed (for plan checks). */
export { CLAIM_JOB_BATCH_QUERY_V1 as CURRENT_CLAIM_JOB_BATCH_QUERY } from './1795939200001-CreateClaimJobBatchFunction';

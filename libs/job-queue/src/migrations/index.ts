import { MigrationInterface } from 'typeorm';
import { schemaOption } from '../options/schema.option';
import { queueSchema } from '../sql/queue-schema';
import { createJobsTableFor } from './1795939200000-CreateJobsTable';
import { createClaimJobBatchFunctionFor } from './1795939200001-CreateClaimJobBatchFunction';
import { createJobTypesTableFor } from './1795939200002-CreateJobTypesTable';
import { addJobRetentionFor } from './1795939200003-AddJobRetention';
import { createJobStatsTableFor } from './1795939200004-CreateJobStatsTable';
import { createJobSchedulesTableFor } from './1795939200005-CreateJobSchedulesTable';
import { skipPausedJobTypesInClaimFor } from './1795939200006-SkipPausedJobTypesInClaim';
import { pinPrunePlanFor } from './1795939200007-PinPrunePlan';
import { createJobScheduleTicksTableFor } from './1795939200008-CreateJobScheduleTicksTable';
import { resumeClaimsAtCursorsFor } from './1795939200009-ResumeClaimsAtCursors';
import { createJobEventsTableFor } from './1795939200010-CreateJobEventsTable';
import { addConcurrencyLimitsFor } from './1795939200011-AddConcurrencyLimits';
import { addRateLimitsFor } from './1795939200012-AddRateLimits';
import { addUniquenessPoliciesFor } from './1795939200013-AddUniquenessPolicies';
import { pruneAtQueueTimeFor } from './1795939200014-PruneAtQueueTime';
import { addJobMetaFor } from './1795939200015-AddJobMeta';
import { addJobListIndexesFor } from './1795939200016-AddJobListIndexes';
import { addJobDependenciesFor } from './1795939200017-AddJobDependencies';
import { addDeadLettersFor } from './1795939200018-AddDeadLetters';
import { countEachDependencyOnceFor } from './1795939200019-CountEachDependencyOnce';
import { prunePastKeptJobsFor } from './1795939200020-PrunePastKeptJobs';
import { addDebounceSuccessorsFor } from './1795939200021-AddDebounceSuccessors';
import { MigrationClass } from './schema-migration';

/** One set of classes per schema: asking twice gives the same classes, as a list of imports would. */
const bySchema = new Map<string, MigrationClass[]>();

/**
 * The job queue's migrations for its default schema (`job_queue`), in the order they must run.
 * Add them to your DataSource: `migrations: [...jobQueueMigrations, ...yourOwn]`.
 *
 * @publicApi
 */
export const jobQueueMigrations: Array<new () => MigrationInterface> = jobQueueMigrationsFor();

/**
 * The job queue's migrations for a queue in another schema (the module's `schema` option), in
 * the order they must run: `migrations: [...jobQueueMigrationsFor({ schema: 'billing_queue' })]`.
 * Their names carry the schema (`CreateJobsTable_billing_queue_1795939200000`), so the migrations
 * of several schemas can be listed in one DataSource and share its migrations table; for the
 * default schema they are `jobQueueMigrations` themselves. Throws `InvalidJobQueueOptionsError`
 * (option `schema`) for a name the module would refuse.
 *
 * @publicApi
 */
export function jobQueueMigrationsFor(
  options: { schema?: string } = {},
): Array<new () => MigrationInterface> {
  const name = schemaOption(options.schema);
  const existing = bySchema.get(name);
  if (existing) return [...existing];
  const schema = queueSchema(name);
  const migrations = [
    createJobsTableFor(schema),
    createClaimJobBatchFunctionFor(schema),
    createJobTypesTableFor(schema),
    addJobRetentionFor(schema),
    createJobStatsTableFor(schema),
    createJobSchedulesTableFor(schema),
    skipPausedJobTypesInClaimFor(schema),
    pinPrunePlanFor(schema),
    createJobScheduleTicksTableFor(schema),
    resumeClaimsAtCursorsFor(schema),
    createJobEventsTableFor(schema),
    addConcurrencyLimitsFor(schema),
    addRateLimitsFor(schema),
    addUniquenessPoliciesFor(schema),
    pruneAtQueueTimeFor(schema),
    addJobMetaFor(schema),
    addJobListIndexesFor(schema),
    addJobDependenciesFor(schema),
    addDeadLettersFor(schema),
    countEachDependencyOnceFor(schema),
    prunePastKeptJobsFor(schema),
    addDebounceSuccessorsFor(schema),
  ];
  bySchema.set(name, migrations);
  return [...migrations];
}

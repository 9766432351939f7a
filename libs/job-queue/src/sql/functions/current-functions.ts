import { DEFAULT_SCHEMA } from '../../job-queue.constants';
import { queueSchema } from '../queue-schema';
import { claimJobBatchQueryV2 } from './claim-job-batch.v2';
import { claimJobBatchQueryV3 } from './claim-job-batch.v3';
import { claimJobBatchQueryV5 } from './claim-job-batch.v5';
import { pruneJobsQueryV3 } from './prune-jobs.v3';

/*
 * The version of each function's statement that the migrations leave installed, for a reader and
 * for the plan tests that EXPLAIN exactly that text. A migration that installs a new version
 * changes its line here (test/integration/sql-functions.current.int-spec.ts compares these with
 * the migrated database). Everything else the migrations install, with every function's
 * settings and grants, is in libs/job-queue/schema.sql.
 *
 * - claim_job_batch: `claimJobBatchQueryV5` when a requested type has a concurrency or a rate
 *   limit (AddRateLimits, 1795939200012, after `releaseRateBlockedKeys`); else `claimJobBatchQueryV3` when the call passes
 *   cursors, `claimJobBatchQueryV2` when it passes none (ResumeClaimsAtCursors, 1795939200009),
 *   inside the second signature's V4 body in claim-job-batch.function.ts.
 * - prune_jobs: `pruneJobsQueryV3` (PrunePastKeptJobs, 1795939200020, the signature with a
 *   cursor), with the settings `pruneJobsQueryV1`'s had: JIT off (AddJobRetention,
 *   1795939200003) and the join settings of PinPrunePlan (1795939200007). The signature with
 *   `p_now` (`pruneJobsQueryV2`, PruneAtQueueTime, 1795939200014) stays for the previous
 *   release's pruners.
 * - jobs_notify_inserted: `createJobsNotifyInsertedV1` (CreateJobsTable, 1795939200000).
 */

/** The statement `claim_job_batch` runs now for a call with cursors. */
export const currentClaimJobBatchQuery = claimJobBatchQueryV3;

/** The statement it runs when a requested type has a concurrency or a rate limit. */
export const currentLimitedClaimQuery = claimJobBatchQueryV5;

/** The statement it runs for a call without cursors (a claim from the heads). */
export const currentClaimFromHeadsQuery = claimJobBatchQueryV2;

/** The statement `prune_jobs` runs now. */
export const currentPruneJobsQuery = pruneJobsQueryV3;

/** `currentClaimJobBatchQuery` in the default schema, as the plan tests EXPLAIN it. */
export const CURRENT_CLAIM_JOB_BATCH_QUERY = currentClaimJobBatchQuery(queueSchema(DEFAULT_SCHEMA));

/** `currentClaimFromHeadsQuery` in the default schema (ten parameters), as the plan tests EXPLAIN it. */
export const CURRENT_CLAIM_FROM_HEADS_QUERY = currentClaimFromHeadsQuery(
  queueSchema(DEFAULT_SCHEMA),
);

/** `currentLimitedClaimQuery` in the default schema, as the plan tests EXPLAIN it. */
export const CURRENT_LIMITED_CLAIM_QUERY = currentLimitedClaimQuery(queueSchema(DEFAULT_SCHEMA));

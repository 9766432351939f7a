import { QueueSchema } from '../queue-schema';
import { CLAIM_REQUESTED_TYPES, claimOfRequestedTypes } from './claim-job-batch.parts';

/** V2's own clause: a requested type whose `job_types` row is paused is dropped (V3 keeps it). */
export const notPaused = (schema: QueueSchema): string => `
      AND NOT EXISTS (SELECT 1 FROM ${schema.jobTypes} paused
                      WHERE paused.job_type = t.job_type AND paused.paused_at IS NOT NULL)`;

/**
 * The claim of `claimJobBatchQueryV1`, word for word, but for one clause: a requested type whose
 * `job_types` row is paused (`paused_at` set, by `QueueService.pause()`) is dropped from `types`
 * before anything is read, so none of its jobs is claimed by any node, and its backlog costs the
 * claim nothing (its queue in `jobs_claim_idx` is never opened). The look-up is one primary-key
 * probe of `job_types` per requested type, made once per claim (`types` is materialised: the
 * later steps read it several times); a type with no row is not paused.
 *
 * A pause is seen by every claim that starts after it commits, on every node; a claim already
 * under way may still take the type's jobs. Running jobs are left alone: they finish.
 *
 * Installed by SkipPausedJobTypesInClaim (1795939200006): the body `claim_job_batch` runs now
 * (see `current-functions.ts`). Frozen: V1's parts with this one clause between them.
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const claimJobBatchQueryV2 = (schema: QueueSchema): string =>
  `${CLAIM_REQUESTED_TYPES}${notPaused(schema)}${claimOfRequestedTypes(schema)}`;

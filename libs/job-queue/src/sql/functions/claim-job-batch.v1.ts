import { QueueSchema } from '../queue-schema';
import { CLAIM_REQUESTED_TYPES, claimOfRequestedTypes } from './claim-job-batch.parts';

/**
 * The claim, as one statement: the best claimable jobs across the requested types in one order
 * (priority DESC, then oldest, then id), at most `cap` of each type, rows other workers hold
 * skipped; marks them claimed for `$1` with a new fencing token, and fixes their policy.
 *
 * Parameters: $1 worker id, $2 job types, $3 batch size, $4 "now" (NULL: the transaction's now();
 * tests pass a fixed time), $5 start: mark the jobs `running` (with `started_at`) at once, for a
 * worker that starts every job it claims; saves a second write per batch. Then one array per
 * type, aligned with $2 (NULL, or a NULL element: none for that type): $6 how many of the type
 * this claim may take (a type at its own concurrency limit gets 0: it is skipped, not queued
 * ahead; NULL: up to the batch size), and the handler's policy that the claim writes into the
 * job's NULL columns, $7 `max_attempts`, $8 `backoff_base_ms`, $9 `backoff_max_ms`,
 * $10 `backoff_jitter`.
 *
 * Shape: each type's queue is the head of `jobs_claim_idx` (led by job_type, then the claim's
 * order), read with `LIMIT` so the claim reads a few index entries per type however many
 * finished, later or other-type rows the table holds. Jobs due later are `scheduled`, outside
 * that index, until the stager makes them `pending` once due; `run_at <= now` stays as a
 * safeguard (a row made `pending` by hand with a later `run_at`) and costs nothing otherwise.
 * - One type open: lock its first `cap` claimable rows (SKIP LOCKED), as a plain claim would.
 * - Several: first read each type's head without locking (`heads`), merge those few rows in the
 *   one order and cut to the batch: that says how many each type gets (`shares`); then lock that
 *   many of each type (SKIP LOCKED). Locking each head whole and keeping the best would hold
 *   rows it does not claim until the statement ends, hiding them from concurrent claimers.
 *   Under contention a type's locked rows may be a little further down its queue than the
 *   heads said, as SKIP LOCKED allows; without it the order is exact.
 *
 * Every claim increments `run_token`, never reset by anything: the run it starts is fenced from
 * every earlier run of the job.
 *
 * The function runs it with `search_path = pg_catalog, pg_temp`: the table is named with its
 * schema, and every other name (unnest, now, count, the operators) is pg_catalog's.
 *
 * Installed by CreateClaimJobBatchFunction (1795939200001); put back by the `down()` of
 * SkipPausedJobTypesInClaim (1795939200006). Frozen: built from `claim-job-batch.parts.ts`.
 * Exported so the plan test EXPLAINs exactly the text the function runs.
 */
export const claimJobBatchQueryV1 = (schema: QueueSchema): string =>
  `${CLAIM_REQUESTED_TYPES}${claimOfRequestedTypes(schema)}`;

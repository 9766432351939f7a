import { ClaimTypes } from '../sql/claim-job-batch.query';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { retryPolicyFor } from '../retry/retry-policy';

/** What every claim of a worker passes for its types, but the caps (made per claim). */
export type ClaimPolicy = Omit<ClaimTypes, 'caps'>;

/**
 * The claim fixes each job's policy from its handler's options (module defaults included): one
 * entry per type, in `jobTypes` order.
 */
export function claimPolicyOf(
  jobTypes: string[],
  registry: JobHandlerRegistry,
  options: ResolvedJobQueueOptions,
): ClaimPolicy {
  const policies = jobTypes.map((jobType) =>
    retryPolicyFor(registry.get(jobType)?.options, options),
  );
  return {
    jobTypes,
    maxAttempts: policies.map((policy) => policy.maxAttempts),
    backoffBaseMs: policies.map((policy) => policy.backoff.baseDelayMs),
    backoffMaxMs: policies.map((policy) => policy.backoff.maxDelayMs),
    backoffJitter: policies.map((policy) => policy.backoff.jitter),
  };
}

import { Job } from '../entities/job.entity';
import { ResolvedBackoff, ResolvedJobQueueOptions } from '../options/resolved-options';

/** How often a job may be attempted, and how long it waits after a failed attempt. */
export interface RetryPolicy {
  maxAttempts: number;
  backoff: ResolvedBackoff;
}

/**
 * The policy of a job type: its handler's (whose options already hold the module's defaults for
 * what the handler leaves out), else the module's `defaultMaxAttempts` and `backoff`. The one
 * place a policy is assembled: the claim writes it into each job's row, and the executor and the
 * reaper fall back to it for a row claimed without one.
 */
export function retryPolicyFor(
  handler: RetryPolicy | undefined,
  options: Pick<ResolvedJobQueueOptions, 'defaultMaxAttempts' | 'backoff'>,
): RetryPolicy {
  return handler
    ? { maxAttempts: handler.maxAttempts, backoff: handler.backoff }
    : { maxAttempts: options.defaultMaxAttempts, backoff: options.backoff };
}

/** The policy a claimed job runs by: its row's (fixed by its first claim), else `fallback`'s. */
export function retryPolicyOfJob(job: Job, fallback: RetryPolicy): RetryPolicy {
  return {
    maxAttempts: job.maxAttempts ?? fallback.maxAttempts,
    backoff: {
      baseDelayMs: job.backoffBaseMs ?? fallback.backoff.baseDelayMs,
      maxDelayMs: job.backoffMaxMs ?? fallback.backoff.maxDelayMs,
      jitter: job.backoffJitter ?? fallback.backoff.jitter,
    },
  };
}

/**
 * Delay before the next attempt after `attempt` (1-based) failed: exponential from
 * `baseDelayMs`, capped at `maxDelayMs`, spread by ±`jitter` so failures that happened together
 * do not retry together. Pure: `random` is injectable for tests.
 *
 * The reaper computes the same delay in SQL for a rescued attempt (sql/rescue-stale-jobs.query.ts;
 * a test checks that both agree): change both together.
 */
export function retryDelayMs(
  attempt: number,
  backoff: ResolvedBackoff,
  random: () => number = Math.random,
): number {
  const exponential = backoff.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(backoff.maxDelayMs, exponential);
  const spread = capped * backoff.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(capped + spread));
}

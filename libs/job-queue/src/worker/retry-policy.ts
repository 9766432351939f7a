import { ResolvedBackoff } from '../options/resolved-options';

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

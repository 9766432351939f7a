/**
 * Exponential backoff with jitter: the delay before attempt `n + 1` is
 * `min(maxDelayMs, baseDelayMs * 2^(n - 1))`, then moved by up to ±`jitter` of itself at random
 * so that jobs that failed together do not retry together.
 *
 * @publicApi
 */
export interface BackoffOptions {
  /** Delay after the first failed attempt. Default: 1000. */
  baseDelayMs?: number;
  /** Upper bound of any delay. Default: 3600000 (one hour). */
  maxDelayMs?: number;
  /** Fraction 0..1 of random spread around each delay. Default: 0.2. */
  jitter?: number;
}

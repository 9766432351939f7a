import { optionValidator as check } from '../validation/option.validator';

/** What `JobQueueHealthIndicator.isHealthy` checks beyond the database and the worker. @publicApi */
export interface JobQueueHealthOptions {
  /** Longest wait for each of the checks' statements, in ms. Default: 1000. */
  timeoutMs?: number;
  /**
   * Unhealthy when this process's worker has not finished a poll for this long, in ms (it polls
   * at least every `worker.pollIntervalMs`; a database outage stretches that up to its backoff).
   * Default: max(30000, 3 × `worker.pollIntervalMs`).
   */
  workerStallMs?: number;
  /**
   * Unhealthy when the next job in line of a type (its highest priority, oldest first) has been
   * due for longer than this, in ms: the workers do not keep up. Paused types are left out.
   * Default: not checked.
   */
  maxDueWaitMs?: number;
  /**
   * Unhealthy when more than `count` jobs failed for good in the last `periodMs`. Default: not
   * checked.
   */
  maxFailed?: { count: number; periodMs: number };
  /** Unhealthy while jobs are held past their lease (`staleAfterMs`). Default: false. */
  failOnStaleJobs?: boolean;
}

export interface ResolvedHealthOptions {
  timeoutMs: number;
  workerStallMs: number | undefined;
  maxDueWaitMs: number | undefined;
  maxFailed: { count: number; periodMs: number } | undefined;
  failOnStaleJobs: boolean;
}

const KEYS = ['timeoutMs', 'workerStallMs', 'maxDueWaitMs', 'maxFailed', 'failOnStaleJobs'];
const DEFAULT_TIMEOUT_MS = 1_000;

/** The options checked, each refusal naming the option and its value. */
export function resolveHealthOptions(options: unknown): ResolvedHealthOptions {
  const given = check.plainObject('options', options ?? {}, 'an object');
  check.knownKeys(given, KEYS);
  const positive = (name: string): number | undefined =>
    given[name] === undefined
      ? undefined
      : check.integer(name, given[name], 1, Number.MAX_SAFE_INTEGER);
  let maxFailed: ResolvedHealthOptions['maxFailed'];
  if (given.maxFailed !== undefined) {
    const failed = check.plainObject('maxFailed', given.maxFailed, '{ count, periodMs }');
    check.knownKeys(failed, ['count', 'periodMs'], { prefix: 'maxFailed.' });
    maxFailed = {
      count: check.integer('maxFailed.count', failed.count, 0, Number.MAX_SAFE_INTEGER),
      periodMs: check.integer('maxFailed.periodMs', failed.periodMs, 1, Number.MAX_SAFE_INTEGER),
    };
  }
  return {
    timeoutMs: positive('timeoutMs') ?? DEFAULT_TIMEOUT_MS,
    workerStallMs: positive('workerStallMs'),
    maxDueWaitMs: positive('maxDueWaitMs'),
    maxFailed,
    failOnStaleJobs:
      given.failOnStaleJobs === undefined
        ? false
        : check.boolean('failOnStaleJobs', given.failOnStaleJobs),
  };
}

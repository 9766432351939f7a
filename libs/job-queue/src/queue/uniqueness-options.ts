import { JobStatus } from '../entities/job-status.enum';
import { JobOptions } from '../interfaces/enqueue-options.interface';
import { PG_INT_MAX } from '../job-queue.constants';
import { ResolvedRetention } from '../options/resolved-options';
import { KeyedJobStatus, UNFINISHED_STATUSES, UNIQUE_STATE_BITS } from '../sql/unique-keys.sql';
import { jobInput } from '../validation/input.validator';

/** What a row stores and how it is written, from a job's uniqueness options. */
export interface ResolvedUniqueness {
  /** The statuses its key counts in, as `jobs.unique_states` bits; `null`: the unfinished ones. */
  statesMask: number | null;
  /** The fixed window folded into its stored key (`uniqueForMs`, `throttleMs`); `null`: none. */
  windowMs: number | null;
  /** `debounceMs`: a holder not yet started takes this job's data and `run_at`. */
  debounceMs: number | null;
}

const NO_POLICY: ResolvedUniqueness = { statesMask: null, windowMs: null, debounceMs: null };

/** Every status: a throttled key counts in all of them, so its window's first job stays. */
const ALL_STATES_MASK = Object.values(UNIQUE_STATE_BITS).reduce((mask, bit) => mask | bit, 0);

const FINISHED: ReadonlyArray<[KeyedJobStatus, keyof ResolvedRetention]> = [
  [JobStatus.Completed, 'completedMs'],
  [JobStatus.Failed, 'failedMs'],
  [JobStatus.Cancelled, 'cancelledMs'],
];

/** Longest period: one that `now() + period` and a window's start still hold (about 285 years). */
const MAX_PERIOD_MS = 9_000_000_000_000;

/**
 * Checks a job's `uniqueKey` companions and resolves them into what its row stores. Each
 * refusal is an `InvalidJobInputError` naming the field (after `path`, `jobs[3].`); `retention`
 * is how long this process keeps the job's finished statuses, which a period counting them must
 * not outlast (the pruner would delete the job that holds the key first).
 */
export function resolveUniqueness(
  path: string,
  opts: JobOptions,
  retention: ResolvedRetention,
): ResolvedUniqueness {
  const { uniqueStates, uniqueForMs, debounceMs, throttleMs } = opts;
  if (
    uniqueStates === undefined &&
    uniqueForMs === undefined &&
    debounceMs === undefined &&
    throttleMs === undefined
  ) {
    return NO_POLICY;
  }
  const named = (field: string): string => `${path}${field}`;
  const needsKey = (field: string, value: unknown): void => {
    if (opts.uniqueKey === undefined) jobInput.fail(named(field), value, 'to come with uniqueKey');
  };
  /** Refuses the first of `fields` that is set: `why` names the option it cannot go with. */
  const refuseBeside = (fields: ReadonlyArray<keyof JobOptions>, why: string): void => {
    const given = fields.find((field) => opts[field] !== undefined);
    if (given) jobInput.fail(named(given), opts[given], `nothing ${why}`);
  };
  if (throttleMs !== undefined) {
    needsKey('throttleMs', throttleMs);
    const throttle = jobInput.integer(named('throttleMs'), throttleMs, 1, MAX_PERIOD_MS);
    if (debounceMs !== undefined) {
      jobInput.fail(named('throttleMs'), throttleMs, 'either debounceMs or throttleMs, not both');
    }
    refuseBeside(
      ['uniqueStates', 'uniqueForMs'],
      'with throttleMs (a throttled key counts in every status, for its window)',
    );
    checkRetention(named('throttleMs'), throttle, ALL_STATES_MASK, retention);
    return { statesMask: ALL_STATES_MASK, windowMs: throttle, debounceMs: null };
  }
  const statesMask = uniqueStates === undefined ? null : checkStates(named, uniqueStates);
  if (statesMask !== null) needsKey('uniqueStates', uniqueStates);
  let windowMs: number | null = null;
  if (uniqueForMs !== undefined) {
    needsKey('uniqueForMs', uniqueForMs);
    windowMs = jobInput.integer(named('uniqueForMs'), uniqueForMs, 1, MAX_PERIOD_MS);
    checkRetention(named('uniqueForMs'), windowMs, statesMask ?? 0, retention);
  }
  let debounce: number | null = null;
  if (debounceMs !== undefined) {
    needsKey('debounceMs', debounceMs);
    debounce = jobInput.integer(named('debounceMs'), debounceMs, 0, PG_INT_MAX);
    refuseBeside(
      ['runAt', 'delayMs'],
      'with debounceMs (a debounced job runs debounceMs after its last enqueue)',
    );
  }
  return { statesMask, windowMs, debounceMs: debounce };
}

/** `uniqueStates`: known statuses, the unfinished ones among them (see `UNFINISHED_STATUSES`). */
function checkStates(named: (field: string) => string, value: unknown): number {
  const field = named('uniqueStates');
  const known = Object.keys(UNIQUE_STATE_BITS);
  const states = jobInput.nonEmptyArray(field, value, `a non-empty array of ${known.join(', ')}`);
  let mask = 0;
  states.forEach((state, i) => {
    const bit = UNIQUE_STATE_BITS[state as KeyedJobStatus];
    if (typeof state !== 'string' || bit === undefined) {
      jobInput.fail(`${field}[${i}]`, state, `one of ${known.join(', ')}`);
    }
    mask |= bit;
  });
  const missing = UNFINISHED_STATUSES.filter((status) => (mask & UNIQUE_STATE_BITS[status]) === 0);
  if (missing.length > 0) {
    jobInput.fail(
      field,
      value,
      `every unfinished status among them (${UNFINISHED_STATUSES.join(', ')}; missing ` +
        `${missing.join(', ')}): a job moves between those by itself, and its key must hold`,
    );
  }
  return mask;
}

/** A period counting finished jobs is no longer than their retention. */
function checkRetention(
  field: string,
  periodMs: number,
  statesMask: number,
  retention: ResolvedRetention,
): void {
  for (const [status, option] of FINISHED) {
    const keptMs = retention[option];
    if ((statesMask & UNIQUE_STATE_BITS[status]) !== 0 && keptMs !== null && periodMs > keptMs) {
      jobInput.fail(
        field,
        periodMs,
        `at most ${keptMs} ms, the retention of ${status} jobs (retention.${option}): ` +
          `the pruner would delete the job that holds the key before its period ends`,
      );
    }
  }
}

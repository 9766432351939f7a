import { MAX_JOB_TYPE_LENGTH, MAX_PREFETCH } from '../job-queue.constants';
import { JobQueueWorkerOptions } from '../interfaces/job-queue-options.interface';
import { optionValidator as check } from '../validation/option.validator';
import { booleanOption, integerOption, OptionSpec } from './option-spec';
import { ResolvedWorkerOptions } from './resolved-options';

/**
 * Every `worker` option, declared once: default, bounds and README row (the README's rows
 * `worker.<key>`; a test holds the two together). Typed against the public interface, so an
 * option added there and not here does not compile. Resolved in this order.
 */
export const WORKER_OPTIONS = {
  concurrency: integerOption({
    default: 10,
    min: 1,
    doc: 'jobs this process runs at once, all types together',
  }),
  batchSize: {
    defaultText: '`concurrency`',
    doc: 'most jobs claimed in one round trip for free slots',
    resolve: (value, option, { concurrency }) =>
      value === undefined ? (concurrency as number) : check.integer(option, value, 1),
  },
  prefetch: {
    defaultText: "'auto'",
    doc:
      "jobs claimed ahead of free slots and held in the worker until one frees: `'auto'` sizes it " +
      "from this worker's run times and claim round trips (at most 4 × `concurrency` or 500, " +
      `the more), a number fixes it (at most ${MAX_PREFETCH}; 0: none); see "Prefetch"`,
    resolve: (value, option) =>
      value === undefined || value === 'auto'
        ? 'auto'
        : check.integer(
            option,
            value,
            0,
            MAX_PREFETCH,
            `'auto' or an integer from 0 to ${MAX_PREFETCH}`,
          ),
  },
  pollIntervalMs: integerOption({
    default: 1_000,
    min: 1,
    doc: 'how often an idle worker polls (LISTEN wakes it sooner)',
  }),
  jobTypes: {
    defaultText: 'every handled type',
    doc: 'claim only these types',
    resolve: (value, option) =>
      value === undefined
        ? undefined
        : check
            .nonEmptyArray(option, value, 'a non-empty array of job types')
            .map((type, i) => check.string(`${option}[${i}]`, type, MAX_JOB_TYPE_LENGTH)),
  },
  listen: booleanOption({
    default: true,
    doc: 'LISTEN for inserts; turn off behind PgBouncer in transaction mode',
  }),
  autoStart: booleanOption({
    default: true,
    doc: 'start claiming once the app has bootstrapped; `false`: wait for `JobWorker.start()`',
  }),
} satisfies {
  [K in keyof JobQueueWorkerOptions]-?: OptionSpec<ResolvedWorkerOptions[K], ResolvedWorkerOptions>;
};

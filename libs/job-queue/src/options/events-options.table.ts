import { JobEventsOptions } from '../interfaces/job-events-options.interface';
import { booleanOption, integerOption, OptionSpec } from './option-spec';
import { ResolvedEventsOptions } from './resolved-options';

/**
 * Every `events` option, declared once: default, bounds and README row (the README's rows
 * `events.<key>`; a test holds the two together). Typed against the public interface, so an
 * option added there and not here does not compile.
 */
export const EVENTS_OPTIONS = {
  // Off by default: the NOTIFY in every claim and outcome write cost a worker 14-25% of its
  // throughput with no-op jobs (bench/README.md, "Shaped by measurement").
  remote: booleanOption({
    default: false,
    doc:
      'events of jobs other processes run: each claim, outcome write, progress write, cancel and ' +
      'rescue statement notifies `<schema>_job_events` of its batch, and a process listens there ' +
      'on a connection of its own while listeners or waits need it. Set it on every process ' +
      'that runs jobs others should hear of, and on those that listen; off (the default), a ' +
      'process notifies nothing and hears only its own jobs (`waitForJob` then polls)',
  }),
  bufferSize: integerOption({
    default: 10_000,
    min: 1,
    doc:
      'most events waiting for `@OnJobEvent` listeners; beyond it events are dropped, counted ' +
      'and logged once per period',
  }),
  waitPollIntervalMs: integerOption({
    default: 1_000,
    min: 1,
    doc: 'how often `waitForJob` reads the waited jobs while this process does not LISTEN',
  }),
  maxLogRowsPerJob: integerOption({
    default: 1_000,
    min: 0,
    doc:
      "most rows of a job's log that `ctx.log` lines and progress writes may fill (dropped " +
      "rows are counted in a last row, not in `events_count`); the queue's own lifecycle " +
      'rows are always written; 0 keeps no lines',
  }),
  logCompletedRuns: booleanOption({
    default: false,
    doc:
      'a run that completes without logging or reporting progress writes its `claimed` and ' +
      '`completed` rows too; off, a plain completion writes no row (see the README for the cost)',
  }),
} satisfies {
  [K in keyof JobEventsOptions]-?: OptionSpec<ResolvedEventsOptions[K], ResolvedEventsOptions>;
};

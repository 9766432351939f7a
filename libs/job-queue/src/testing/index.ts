// `nest-pg-job-queue/testing`: the testing kit, an entry point of its own so that an app's
// production build never loads it.
export { JobQueueTestingModule } from './job-queue-testing.module';
export type { OverridableTestingModule } from './job-queue-testing.module';
export { JobQueueTester } from './job-queue-tester';
export type { JobQueueProviderLookup } from './job-queue-tester';
export { JobQueueAssertionError } from './job-queue-assertion.error';
export type {
  DrainOptions,
  DrainOutcome,
  DrainRun,
  DrainSummary,
  EnqueuedJobExpectation,
  EnqueuedJobFilter,
  PerformResult,
} from './testing.types';

// The package's public surface, named one by one: anything not listed here is internal and may
// change in any release. `npm run api:check` compares it with etc/nest-pg-job-queue.api.md, so a
// change to what users can import shows in review.

// Module and options
export { JobQueueModule } from './job-queue.module';
export type {
  JobQueueModuleAsyncOptions,
  JobQueueModuleRootOptions,
} from './job-queue.module-definition';
export type {
  JobQueueModuleOptions,
  JobQueueWorkerOptions,
} from './interfaces/job-queue-options.interface';
export type { BackoffOptions } from './interfaces/backoff-options.interface';
export type { RetentionOptions } from './interfaces/retention-options.interface';
export type { RateLimitOptions } from './interfaces/rate-limit-options.interface';
export type { PruneOptions, PruneReport } from './interfaces/prune-options.interface';
export type { RedriveOptions, RedriveReport } from './interfaces/redrive-options.interface';
export type { JobEventsOptions } from './interfaces/job-events-options.interface';
export type { JobContextHooks } from './interfaces/job-context-hooks.interface';
export { JobQueueInstruments } from './instrumentation/job-queue-instruments';
export type {
  JobEnqueueScope,
  JobQueueInstrument,
  JobRunEnd,
  JobRunEnded,
  JobRunScope,
} from './instrumentation/job-queue-instrument.interface';
export { jobQueueMigrations, jobQueueMigrationsFor } from './migrations';

// The worker: starts by itself unless worker.autoStart is false
export { JobWorker } from './worker/job-worker';

// Producing and managing jobs
export { QueueService } from './queue.service';
export type { JobQueueStats, JobStatusCounts, JobTypeStats } from './stats/job-queue-stats.types';
export type { JobSchedule, ScheduleOptions } from './interfaces/schedule-options.interface';
export type { CatchUp } from './interfaces/schedule-options.interface';
export type { StatsOptions } from './interfaces/stats-options.interface';
export type {
  EnqueueManyItem,
  EnqueueOptions,
  EnqueueOutcome,
  EnqueueResult,
  DependencyFailurePolicy,
  DependencyOptions,
  JobOptions,
  WriteOptions,
} from './interfaces/enqueue-options.interface';
export type {
  DependencyResult,
  DependencyResults,
  FlowDefinition,
  FlowJobOptions,
  FlowNode,
  FlowResult,
  FlowStep,
} from './interfaces/flow.interface';
export type { JobListPage, ListJobsQuery } from './interfaces/list-jobs.interface';
export { isJobListCursor } from './validation/job-list-cursor';
export { Job } from './entities/job.entity';
export type {
  JobDataOf,
  JobFor,
  JobOfType,
  JobResultOf,
  JobTypes,
  TypedEnqueueManyItem,
  TypedJobHandlerMethod,
  UntypedOnly,
} from './interfaces/job-types.interface';
export { JobStatus } from './entities/job-status.enum';

// Handling jobs
export { JobHandler } from './decorators/job-handler.decorator';
export { InjectJob, JOB_REF } from './decorators/inject-job.decorator';
export type { TypedJobHandlerDecorator } from './decorators/job-handler.decorator';
export type { JobHandlerOptions } from './interfaces/job-handler-options.interface';
export type { JobContext, JobHandlerFunction } from './interfaces/job-context.interface';

// Job events and waiting for a job
export { OnJobEvent } from './decorators/on-job-event.decorator';
export type {
  JobEvent,
  JobEventName,
  OnJobEventOptions,
  WaitForJobOptions,
} from './interfaces/job-event.interface';
export type {
  JobLogEntry,
  JobLogKind,
  JobLogReadOptions,
} from './interfaces/job-log-entry.interface';

// Errors
export {
  DuplicateJobHandlerError,
  InvalidJobDataError,
  InvalidJobInputError,
  InvalidJobQueueOptionsError,
  JobCancelledError,
  JobNotFoundError,
  JobQueueDatabaseError,
  JobQueueError,
  JobQueueUnavailableError,
  JobStateConflictError,
  JobTimeoutError,
  JobWaitTimeoutError,
  PermanentJobError,
  ScheduleNotFoundError,
  SnoozeJob,
  WorkerShutdownError,
} from './errors';
export type { JobDataFieldError, UniqueKeyHolder } from './errors';

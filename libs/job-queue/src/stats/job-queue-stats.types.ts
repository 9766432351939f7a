import { JobStatus } from '../entities/job-status.enum';

/** Counts of jobs by status, for one job type. @publicApi */
export type JobStatusCounts = Record<JobStatus, number>;

/** One job type in `stats()`: its counts by status, and whether it is paused. @publicApi */
export type JobTypeStats = JobStatusCounts & { paused: boolean };

/**
 * `stats()`: counts by job type, then status, and each type's `paused`. Types with no jobs are
 * absent, unless paused. @publicApi
 */
export type JobQueueStats = Record<string, JobTypeStats>;

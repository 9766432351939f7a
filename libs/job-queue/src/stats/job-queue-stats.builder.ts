import { JobStatus } from '../entities/job-status.enum';
import { JobQueueStats, JobStatusCounts } from './job-queue-stats.types';
import { JobCountsByType } from '../sql/refresh-job-stats.query';

/** Every status at 0. */
function emptyStatusCounts(): JobStatusCounts {
  return Object.fromEntries(
    Object.values(JobStatus).map((status) => [status, 0]),
  ) as JobStatusCounts;
}

/**
 * `stats()`'s result from stored counts and the paused types: one entry per type that has jobs,
 * every status present (zeros included), each with `paused`; plus a paused type that has no
 * jobs (all zeros), so an operator sees every pause, even of a type whose queue is empty. The
 * one place the per-type record is built.
 */
export function toJobQueueStats(
  counts: JobCountsByType,
  pausedTypes: readonly string[],
): JobQueueStats {
  const paused = new Set(pausedTypes);
  const stats: JobQueueStats = {};
  for (const [jobType, byStatus] of Object.entries(counts)) {
    const record = emptyStatusCounts();
    for (const [status, count] of Object.entries(byStatus)) {
      record[status as JobStatus] = Number(count);
    }
    stats[jobType] = { ...record, paused: paused.has(jobType) };
  }
  for (const jobType of paused) {
    stats[jobType] ??= { ...emptyStatusCounts(), paused: true };
  }
  return stats;
}

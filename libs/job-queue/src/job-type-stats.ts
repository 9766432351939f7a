import { JobStatus } from './entities/job-status.enum';
import type { JobQueueStats, JobStatusCounts } from './queue.service';

/** Every status at 0. */
export function emptyStatusCounts(): JobStatusCounts {
  return Object.fromEntries(
    Object.values(JobStatus).map((status) => [status, 0]),
  ) as JobStatusCounts;
}

/**
 * `stats()`'s answer: the counts by type, each with `paused`, plus a paused type that has no jobs
 * (all zeros), so an operator sees every pause, even of a type whose queue is empty.
 */
export function withPausedFlags(
  counts: Record<string, JobStatusCounts>,
  pausedTypes: readonly string[],
): JobQueueStats {
  const paused = new Set(pausedTypes);
  const stats: JobQueueStats = {};
  for (const [jobType, byStatus] of Object.entries(counts)) {
    stats[jobType] = { ...byStatus, paused: paused.has(jobType) };
  }
  for (const jobType of paused) {
    stats[jobType] ??= { ...emptyStatusCounts(), paused: true };
  }
  return stats;
}

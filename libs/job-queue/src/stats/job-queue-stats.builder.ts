import { JobStatus } from '../entities/job-status.enum';
import type { JobQueueStats, JobStatusCounts } from '../queue.service';
import { JobCountsByType } from '../sql/refresh-job-stats.query';

/**
 * `stats()`'s result from stored counts: one entry per type that has jobs, every status present
 * (zeros included). The one place the per-type record is built.
 */
export function toJobQueueStats(counts: JobCountsByType): JobQueueStats {
  const stats: JobQueueStats = {};
  for (const [jobType, byStatus] of Object.entries(counts)) {
    const record = Object.fromEntries(
      Object.values(JobStatus).map((status) => [status, 0]),
    ) as JobStatusCounts;
    for (const [status, count] of Object.entries(byStatus)) {
      record[status as JobStatus] = Number(count);
    }
    stats[jobType] = record;
  }
  return stats;
}

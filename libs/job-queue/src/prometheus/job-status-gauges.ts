import { Gauge } from 'prom-client';
import { JobStatus } from '../entities/job-status.enum';
import { JobStatsSnapshot } from './job-stats-snapshot';

const STATUSES = Object.values(JobStatus);

/**
 * `<prefix>jobs{type,status}`: the jobs in the table, from the stats snapshot (every status of a
 * type that has jobs, zeros included), and `<prefix>jobs_snapshot_age_seconds`: how old that
 * snapshot is (worker nodes refresh it every `statsIntervalMs` or so; with no worker running it
 * only ages). Both are read at scrape time, in one read shared by the two (see
 * `JobStatsSnapshot`), and are the same on every process: aggregate them with `max`, not `sum`.
 * When the snapshot cannot be read (the database is down or slow) both are left empty rather
 * than showing the last values as if they were current.
 */
export function jobStatusGauges(prefix: string, snapshot: JobStatsSnapshot): Gauge[] {
  const jobs: Gauge<'type' | 'status'> = new Gauge({
    name: `${prefix}jobs`,
    help: 'Jobs in the queue by type and status, from the stats snapshot.',
    labelNames: ['type', 'status'],
    registers: [],
    collect: async () => {
      const row = await snapshot.read();
      // Cleared and set after the read, in one synchronous step: a scrape never sees half.
      jobs.reset();
      for (const [type, byStatus] of Object.entries(row?.counts ?? {})) {
        for (const status of STATUSES) jobs.set({ type, status }, Number(byStatus[status] ?? 0));
      }
    },
  });
  const age: Gauge = new Gauge({
    name: `${prefix}jobs_snapshot_age_seconds`,
    help: `Age of the stats snapshot that ${prefix}jobs shows.`,
    registers: [],
    collect: async () => {
      const row = await snapshot.read();
      if (row) age.set(row.age_ms / 1000);
      else age.remove(); // no sample, rather than an age of 0
    },
  });
  return [jobs, age];
}

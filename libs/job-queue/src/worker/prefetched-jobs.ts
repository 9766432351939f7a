import { Injectable } from '@nestjs/common';
import { Job } from '../entities/job.entity';
import { runKey } from './running-job';
import { RunRef } from './running-jobs';

/**
 * Jobs claimed ahead of free slots (`worker.prefetch`), waiting in this process for a slot, in
 * the order they were claimed (best first). Each is claimed like any other (running, leased to
 * this worker, its attempt counted): the heartbeat renews their leases, a cancel or a lost
 * lease drops them before they start, and shutdown hands them back with the rest of what the
 * worker holds (`releaseWorkerJobs`).
 */
@Injectable()
export class PrefetchedJobs {
  private jobs: Job[] = [];
  private readonly perType = new Map<string, number>();

  get size(): number {
    return this.jobs.length;
  }

  countOf(jobType: string): number {
    return this.perType.get(jobType) ?? 0;
  }

  /** Every job held, as (job id, token), for the heartbeat. */
  runs(): RunRef[] {
    return this.jobs.map((job) => ({ id: job.id, token: job.runToken }));
  }

  push(job: Job): void {
    this.jobs.push(job);
    this.count(job.jobType, 1);
  }

  /**
   * Takes out the job held longest. Any may start in a free slot: a claim never takes more of
   * a type with a limit of its own than that limit minus what runs or waits here already.
   */
  shift(): Job | undefined {
    const job = this.jobs.shift();
    if (job) this.count(job.jobType, -1);
    return job;
  }

  /**
   * Drops these runs (cancelled, or their lease lost) so that they never start; returns the ids
   * of the jobs it dropped (runs not held here are ignored).
   */
  dropRuns(runs: readonly RunRef[]): string[] {
    if (runs.length === 0) return [];
    const doomed = new Set(runs.map((run) => runKey(run.id, run.token)));
    const dropped: string[] = [];
    this.jobs = this.jobs.filter((job) => {
      if (!doomed.has(runKey(job.id, job.runToken))) return true;
      this.count(job.jobType, -1);
      dropped.push(job.id);
      return false;
    });
    return dropped;
  }

  /** Empties the buffer (the worker stops; what was held is handed back by the worker). */
  clear(): void {
    this.jobs = [];
    this.perType.clear();
  }

  private count(jobType: string, delta: number): void {
    this.perType.set(jobType, this.countOf(jobType) + delta);
  }
}

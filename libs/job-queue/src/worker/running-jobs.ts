import { Injectable } from '@nestjs/common';
import { RunningJob, runKey } from './running-job';
import { SupersededWrites } from './superseded-writes';

/** One run of one job: its id and fencing token. */
export interface RunRef {
  id: string;
  token: number;
}

/**
 * The runs this worker holds right now, by job id AND fencing token, with counts per type: what
 * the poller reads to claim only free slots, the heartbeat renews, and shutdown waits for.
 *
 * Two runs of one job can be here at once for a moment: a job cancelled (or taken back) and
 * retried while its old run is still going may be claimed again by this same worker. Each run
 * counts against the concurrency limits until it settles, and removing one never removes the
 * other. Only the newest run can write anything for the job (see `SupersededWrites`).
 */
@Injectable()
export class RunningJobs {
  /** Writes of runs whose job was cancelled, retried or taken back since: counted here. */
  readonly superseded = new SupersededWrites();
  private readonly byRun = new Map<string, RunningJob>();
  private readonly perType = new Map<string, number>();
  private readonly idleWaiters = new Set<() => void>();

  get size(): number {
    return this.byRun.size;
  }

  countOf(jobType: string): number {
    return this.perType.get(jobType) ?? 0;
  }

  /** Every run that holds its job, as (job id, token): not those finished in a transaction. */
  runs(): RunRef[] {
    return this.all()
      .filter((entry) => !entry.finished)
      .map((entry) => ({ id: entry.job.id, token: entry.token }));
  }

  /** The run of job `id` with fencing token `token`, if this worker holds it. */
  get(id: string, token: number): RunningJob | undefined {
    return this.byRun.get(runKey(id, token));
  }

  /** Whether `entry` is still held (it has not settled). */
  holds(entry: RunningJob): boolean {
    return this.byRun.get(entry.key) === entry;
  }

  all(): RunningJob[] {
    return [...this.byRun.values()];
  }

  add(entry: RunningJob): void {
    if (this.byRun.has(entry.key)) throw new Error(`Run ${entry.key} is held already`);
    this.byRun.set(entry.key, entry);
    this.perType.set(entry.job.jobType, this.countOf(entry.job.jobType) + 1);
  }

  /** Removes this run (once it settled); any other run of the same job stays. */
  delete(entry: RunningJob): void {
    if (!this.holds(entry)) return;
    this.byRun.delete(entry.key);
    this.perType.set(entry.job.jobType, this.countOf(entry.job.jobType) - 1);
    if (this.byRun.size === 0) for (const resolve of this.idleWaiters) resolve();
  }

  /** Resolves once no job is held, or after `timeoutMs` (default: no limit); true when idle. */
  async waitUntilIdle(timeoutMs = Infinity): Promise<boolean> {
    if (this.byRun.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let waiter: (() => void) | undefined;
    const idle = new Promise<boolean>((resolve) => {
      waiter = () => resolve(true);
      this.idleWaiters.add(waiter);
      if (timeoutMs !== Infinity) timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await idle;
    } finally {
      clearTimeout(timer);
      this.idleWaiters.delete(waiter!);
    }
  }
}

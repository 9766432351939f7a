import { Injectable } from '@nestjs/common';
import { RunningJob } from './running-job';

/**
 * The jobs this worker holds right now, by id, with counts per type: what the poller reads to
 * claim only free slots, the heartbeat renews, and shutdown waits for.
 */
@Injectable()
export class RunningJobs {
  private readonly byId = new Map<string, RunningJob>();
  private readonly perType = new Map<string, number>();
  private readonly idleWaiters = new Set<() => void>();

  get size(): number {
    return this.byId.size;
  }

  countOf(jobType: string): number {
    return this.perType.get(jobType) ?? 0;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  get(id: string): RunningJob | undefined {
    return this.byId.get(id);
  }

  all(): RunningJob[] {
    return [...this.byId.values()];
  }

  add(entry: RunningJob): void {
    this.byId.set(entry.job.id, entry);
    this.perType.set(entry.job.jobType, this.countOf(entry.job.jobType) + 1);
  }

  delete(id: string): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    this.byId.delete(id);
    this.perType.set(entry.job.jobType, this.countOf(entry.job.jobType) - 1);
    if (this.byId.size === 0) for (const resolve of this.idleWaiters) resolve();
  }

  /** Resolves once no job is held, or after `timeoutMs` (default: no limit); true when idle. */
  async waitUntilIdle(timeoutMs = Infinity): Promise<boolean> {
    if (this.byId.size === 0) return true;
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

import { performance } from 'node:perf_hooks';
import { Job } from '../entities/job.entity';
import { PrefetchedJobs } from './prefetched-jobs';
import { RunTimes } from './run-times';

/** The shortest a held job may wait for a slot before it is handed back. */
export const MIN_HOLD_MS = 1_000;

/**
 * How long a held job of `jobType` may wait here for a slot: max(1 s, 2 × the type's median
 * run time on this worker). A type whose runs take long may wait longer, as a slot of its own
 * frees up as rarely; a job that would wait longer is better run by another worker.
 */
export function holdLimitMs(runTimes: RunTimes, jobType: string): number {
  return Math.max(MIN_HOLD_MS, 2 * (runTimes.median(jobType) ?? 0));
}

/**
 * Hands back the held jobs that waited longer than their `holdLimitMs` for a slot, so that a
 * worker whose slots are busy with long jobs never sits on jobs another worker could run: a
 * timer set for the first held job's limit, set again after each claim and each hand-back.
 * `handedBack` is told first, so the poller claims no more ahead of its slots until one frees.
 */
export class HoardedJobsWatch {
  private timer: NodeJS.Timeout | undefined;
  private readonly limitOf = (jobType: string): number => holdLimitMs(this.runTimes, jobType);

  constructor(
    private readonly prefetched: PrefetchedJobs,
    private readonly runTimes: RunTimes,
    private readonly handBack: (jobs: Job[], why: string) => Promise<void>,
    private readonly handedBack: () => void,
  ) {}

  /** (Re)sets the timer for the first held job's limit; none while nothing is held. */
  arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const at = this.prefetched.firstOverdueAt(this.limitOf);
    if (at === undefined) return;
    this.timer = setTimeout(() => this.handBackOverdue(), Math.max(at - performance.now(), 0));
    this.timer.unref();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private handBackOverdue(): void {
    this.timer = undefined;
    const overdue = this.prefetched.takeOverdue(this.limitOf);
    if (overdue.length > 0) {
      this.handedBack();
      void this.handBack(
        overdue,
        `no slot freed within max(${MIN_HOLD_MS} ms, 2 × their type's median run time)`,
      );
    }
    this.arm();
  }
}

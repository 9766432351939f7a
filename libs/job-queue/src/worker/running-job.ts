import { Job } from '../entities/job.entity';

/** `id:token`, one run of one job: the key of `RunningJobs` and of the heartbeat's answer. */
export function runKey(jobId: string, runToken: number): string {
  return `${jobId}:${runToken}`;
}

/**
 * One run of a job this process holds (claimed, not finished yet): the job as claimed, with the
 * run's fencing token (`job.runToken`), and whether the run has been aborted (timeout,
 * cancellation, shutdown) and why.
 *
 * The AbortController behind `signal` is only made when something reads the signal: most
 * handlers never do, and a controller per job is a cost every short job would pay. An abort
 * before that is replayed onto the new controller.
 */
export class RunningJob {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private abortListener: ((reason: unknown) => void) | undefined;

  /** This run's `runKey`. */
  readonly key: string;

  /**
   * Set once `ctx.transaction` committed the job's completion while the handler goes on: the
   * job is no longer held, so nothing renews its lease or aborts it for having lost it.
   */
  finished = false;

  constructor(readonly job: Job) {
    this.key = runKey(job.id, job.runToken);
  }

  /** The run's fencing token: every write of the run carries it. */
  get token(): number {
    return this.job.runToken;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** What `abort` was called with first; `undefined` while not aborted. */
  get abortReason(): unknown {
    return this.abortedWith?.reason;
  }

  /** Like `AbortController.abort`: the first reason wins, later calls change nothing. */
  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    this.abortListener?.(reason);
  }

  /** The executor's hook: called once on abort, or at once if the job is already aborted. */
  onAbort(listener: (reason: unknown) => void): void {
    if (this.abortedWith) listener(this.abortedWith.reason);
    else this.abortListener = listener;
  }
}

import { Injectable } from '@nestjs/common';

/**
 * How a maintenance pass that made jobs claimable (the stager, the cron scheduler) wakes this
 * node's poller without depending on it: the poller listens, the passes call `jobsClaimable()`.
 * Keeps the imports one way: the poller (worker/) is above every pass.
 */
@Injectable()
export class ClaimWakeup {
  private listener: (() => void) | undefined;

  /** Called at each `jobsClaimable()`; returns the function that stops it. */
  listen(listener: () => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  /** Jobs became claimable here: the poller, if one listens, claims soon. */
  jobsClaimable(): void {
    this.listener?.();
  }
}

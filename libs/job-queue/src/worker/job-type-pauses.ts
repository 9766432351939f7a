import { Injectable } from '@nestjs/common';

/**
 * How `QueueService.pause()` reaches this process's own worker before it resolves: the worker
 * listens while it runs and drops the held jobs of the paused type (see `JobPoller.dropPaused`).
 * Other nodes learn of a pause by notification or at their next heartbeat.
 */
@Injectable()
export class JobTypePauses {
  private listener: ((jobType: string) => Promise<void>) | undefined;

  /** Called with each type paused in this process; returns the function that stops it. */
  listen(listener: (jobType: string) => Promise<void>): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  /** `jobType` was paused here: resolves once this process's worker has dropped its held jobs. */
  async paused(jobType: string): Promise<void> {
    await this.listener?.(jobType);
  }
}

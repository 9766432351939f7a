import { SchedulerRegistry } from '@nestjs/schedule';
import { LogPeriod } from './log-period';

/**
 * A periodic job of the worker itself (poll, heartbeat, reaper), registered under `name` in the
 * queue's SchedulerRegistry (the host's when it has one, so it is visible there like any
 * `@Interval`). A run that is still going when the next tick comes is not started twice;
 * `stop()` waits for it. Failures in a row (an outage) reach `onError` once per log period, not
 * once per tick. `start()` after `stop()` starts it again.
 */
export class ScheduledTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly logPeriod = new LogPeriod();

  constructor(
    private readonly schedulerRegistry: SchedulerRegistry,
    private readonly name: string,
    private readonly periodMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    const timer = this.tickEvery();
    try {
      this.schedulerRegistry.addInterval(this.name, timer);
    } catch (error) {
      clearInterval(timer); // a name taken already: no timer may outlive the failed start
      throw error;
    }
    this.timer = timer;
  }

  /**
   * Keeps ticking on a timer of its own, out of the registry, until `stop()`.
   * NOTE: @nestjs/schedule's orchestrator clears every interval of its registry in its own
   * `beforeApplicationShutdown`, which may run before ours (e.g. when both modules are global).
   * What must outlive that, like the heartbeat while running jobs drain, detaches first; and when
   * the host cleared it already, this starts it again.
   */
  detach(): void {
    if (!this.timer) return;
    this.unregister();
    this.timer = this.tickEvery();
  }

  async stop(): Promise<void> {
    this.unregister();
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tickEvery(): NodeJS.Timeout {
    return setInterval(() => {
      this.running ??= this.run()
        .then(() => this.logPeriod.reset())
        .catch((error: Error) => {
          if (this.logPeriod.due()) this.onError(error);
        })
        .finally(() => (this.running = undefined));
    }, this.periodMs);
  }

  /** Removes (and clears) our entry; one the host deleted, or replaced, is left alone. */
  private unregister(): void {
    if (
      this.timer &&
      this.schedulerRegistry.doesExist('interval', this.name) &&
      this.schedulerRegistry.getInterval(this.name) === this.timer
    ) {
      this.schedulerRegistry.deleteInterval(this.name);
    }
  }
}

import { SchedulerRegistry } from '@nestjs/schedule';
import { LogPeriod } from './log-period';

/**
 * A periodic job of the worker itself (heartbeat, reaper), registered in Nest's
 * SchedulerRegistry under `name` so it is visible and removable like any `@Interval`. A run that
 * is still going when the next tick comes is not started twice; `stop()` waits for it.
 * Failures in a row (an outage) reach `onError` once per log period, not once per tick.
 */
export class ScheduledTask {
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
    this.schedulerRegistry.addInterval(
      this.name,
      setInterval(() => {
        this.running ??= this.run()
          .then(() => this.logPeriod.reset())
          .catch((error: Error) => {
            if (this.logPeriod.due()) this.onError(error);
          })
          .finally(() => (this.running = undefined));
      }, this.periodMs),
    );
  }

  async stop(): Promise<void> {
    if (this.schedulerRegistry.doesExist('interval', this.name)) {
      this.schedulerRegistry.deleteInterval(this.name);
    }
    await this.running;
  }
}

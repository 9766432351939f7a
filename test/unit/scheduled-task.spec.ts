import { SchedulerRegistry } from '@nestjs/schedule';
import { ScheduledTask } from '../../libs/job-queue/src/periodic/scheduled-task';

/** A run the test finishes by hand: how many started, and how to end the one going on. */
function controlledRun() {
  let finish: ((error?: Error) => void) | undefined;
  const run = {
    started: 0,
    run: () => {
      run.started++;
      return new Promise<void>((resolve, reject) => {
        finish = (error) => (error ? reject(error) : resolve());
      });
    },
    /** Ends the current run, then lets its promise callbacks run. */
    async end(error?: Error) {
      finish!(error);
      finish = undefined;
      await jest.advanceTimersByTimeAsync(0);
    },
  };
  return run;
}

// Jest's fake timers drive the ticks (and Date.now, which LogPeriod reads): nothing waits.
describe('ScheduledTask: a periodic task of the worker', () => {
  let registry: SchedulerRegistry;
  const errors: string[] = [];

  beforeEach(() => {
    jest.useFakeTimers();
    registry = new SchedulerRegistry();
    errors.length = 0;
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  const task = (run: () => Promise<unknown>, name = 'job-queue:test') =>
    new ScheduledTask(registry, name, 1_000, run, (error) => errors.push(error.message));

  it('runs once per period, registered under its name, and not at all after stop()', async () => {
    let runs = 0;
    const scheduled = task(async () => void runs++);
    scheduled.start();
    expect(registry.getIntervals()).toEqual(['job-queue:test']);
    await jest.advanceTimersByTimeAsync(999);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(4_000);
    expect(runs).toBe(5);
    await scheduled.stop();
    expect(registry.getIntervals()).toEqual([]);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(5);
  });

  it('never starts a run while the last one is still going, and stop() waits for it', async () => {
    const run = controlledRun();
    const scheduled = task(run.run);
    scheduled.start();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(run.started).toBe(1); // four ticks came while the first run went on
    let stopped = false;
    const stopping = scheduled.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    await run.end();
    await stopping;
    expect(stopped).toBe(true);
  });

  it('reports failures in a row once per log period, and again at once after a success', async () => {
    let failing = true;
    const scheduled = task(async () => {
      if (failing) throw new Error('database down');
    });
    scheduled.start();
    // 30 failing ticks (one a second): lines at 1 s, then after 1, 2, 4, 8 and 16 s.
    await jest.advanceTimersByTimeAsync(30_000);
    expect(errors).toEqual(Array(5).fill('database down'));
    failing = false;
    await jest.advanceTimersByTimeAsync(1_000);
    failing = true;
    await jest.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(6);
    await scheduled.stop();
  });

  it('refuses a name taken in the registry, leaving no timer behind', async () => {
    let runs = 0;
    registry.addInterval(
      'job-queue:test',
      setInterval(() => undefined, 60_000),
    );
    const scheduled = task(async () => void runs++);
    expect(() => scheduled.start()).toThrow();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(0);
    clearInterval(registry.getInterval('job-queue:test'));
  });

  it('keeps ticking once detached, after the host cleared its registry, until stop()', async () => {
    let runs = 0;
    const scheduled = task(async () => void runs++);
    scheduled.start();
    scheduled.detach();
    expect(registry.getIntervals()).toEqual([]);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(runs).toBe(3);
    await scheduled.stop();
    await jest.advanceTimersByTimeAsync(3_000);
    expect(runs).toBe(3);
  });

  it('starts again after stop()', async () => {
    let runs = 0;
    const scheduled = task(async () => void runs++);
    scheduled.start();
    await scheduled.stop();
    scheduled.start();
    await jest.advanceTimersByTimeAsync(2_000);
    expect(runs).toBe(2);
    await scheduled.stop();
  });
});

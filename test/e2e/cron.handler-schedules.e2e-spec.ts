import { Provider } from '@nestjs/common';
import { InvalidJobQueueOptionsError, JobSchedule } from 'nest-pg-job-queue';
import {
  bootFailure,
  startWorkerApp,
  useWorkerTestFile,
  WorkerApp,
} from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { CapturingLogger } from '../support/capturing-logger';
import {
  BadCatchUpHandlers,
  BadCronHandlers,
  BadTimezoneHandlers,
  DailyReportAtSeven,
  DailyReportAtSix,
  DailyReportWithoutCron,
  TimezoneWithoutCronHandlers,
  UnrelatedHandlers,
} from '../fixtures/cron.handlers';

const REPORT = 'cron.daily-report';

describe('@JobHandler cron: the handler schedules each boot writes', () => {
  const file = useWorkerTestFile();
  let observer: WorkerApp;

  beforeAll(async () => {
    observer = await file.start({ queueOptions: { worker: false } });
  });
  beforeEach(() => observer.dataSource.query(`TRUNCATE job_queue.job_schedules`));

  /** Boots a worker node with these handlers, then shuts it down: one deploy's boot. */
  async function bootAndStop(providers: Provider[]): Promise<void> {
    const app = await startWorkerApp({ url: file.url, providers, queueOptions: { worker: {} } });
    await app.close();
  }
  const report = async (): Promise<JobSchedule | undefined> =>
    (await observer.queue.schedules()).find((schedule) => schedule.name === REPORT);

  it('writes the schedule at boot, named after the type, and fires it in its zone', async () => {
    await bootAndStop([DailyReportAtSix]);
    const schedule = await report();
    expect(schedule).toMatchObject({
      name: REPORT,
      jobType: REPORT,
      cron: '0 6 * * *',
      timezone: 'Europe/Berlin',
      catchUp: 'once',
      source: 'handler',
      data: null,
      priority: 100,
      maxAttempts: null,
    });
    expect([4, 5]).toContain(schedule!.nextFireAt!.getUTCHours()); // 06:00 CEST or CET
  });

  it('keeps where the schedule stands when the next boot has the same cron', async () => {
    await bootAndStop([DailyReportAtSix]);
    const missed = new Date(Date.now() - 3 * 24 * 3_600_000);
    await observer.dataSource.query(
      `UPDATE job_queue.job_schedules SET next_fire_at = $1 WHERE name = $2`,
      [missed, REPORT],
    );
    // A restart must neither lose the missed fire times (catch-up) nor fire one again: the
    // restarted node writes the same schedule, keeps where it stands, and its first ticks catch
    // the missed days up with one job.
    const logger = new CapturingLogger();
    const app = await startWorkerApp({ url: file.url, providers: [DailyReportAtSix], logger });
    try {
      await waitFor(async () => (await report())!.nextFireAt!.getTime() > Date.now(), {
        description: 'the restarted node to fire the missed schedule',
      });
    } finally {
      await app.close();
    }
    const [{ jobs }] = await observer.dataSource.query(
      `SELECT count(*)::int AS jobs FROM job_queue.jobs WHERE job_type = $1`,
      [REPORT],
    );
    expect(jobs).toBe(1);
    // Said once, by the node that fired it.
    expect(logger.matching(/missed fire times/).map((line) => line.message)).toEqual([
      `Schedule "${REPORT}" missed fire times from ${missed.toISOString()} while no worker ticked: ` +
        `enqueued 1 job(s), from ${(await report())!.lastFireAt!.toISOString()} (catchUp: once)`,
    ]);
  });

  it('deletes the schedule when the next deploy removes the cron; a node without the handler leaves it', async () => {
    await bootAndStop([DailyReportAtSix]);
    await observer.queue.schedule('cron.mine', '0 6 * * *', REPORT, {}); // schedule()'s own
    await bootAndStop([UnrelatedHandlers]);
    expect(await report()).toBeDefined();

    await bootAndStop([DailyReportWithoutCron]);
    expect((await observer.queue.schedules()).map((s) => s.name)).toEqual(['cron.mine']);
  });

  it('lets the last boot win when two deployments disagree, and fires what the table holds', async () => {
    await bootAndStop([DailyReportAtSix]);
    await bootAndStop([DailyReportAtSeven]);
    const schedule = await report();
    expect(schedule).toMatchObject({ cron: '0 7 * * *', timezone: 'UTC', catchUp: 'skip' });
    expect(schedule!.nextFireAt!.getUTCHours()).toBe(7);
    await bootAndStop([DailyReportAtSix]);
    expect(await report()).toMatchObject({ cron: '0 6 * * *', timezone: 'Europe/Berlin' });
  });

  it('takes a name schedule() used, and then refuses schedule() on it', async () => {
    await observer.queue.schedule(REPORT, '* * * * *', REPORT, { mine: true });
    await bootAndStop([DailyReportAtSix]);
    expect(await report()).toMatchObject({ cron: '0 6 * * *', source: 'handler', data: null });
    await expect(observer.queue.schedule(REPORT, '* * * * *', REPORT, {})).rejects.toThrow(
      '@JobHandler',
    );
  });

  it.each([
    ['a bad cron expression', BadCronHandlers, 'cron.bad', 'cron', 'every day at six'],
    ['an unknown time zone', BadTimezoneHandlers, 'cron.bad-zone', 'timezone', 'Mars/Olympus'],
    [
      'a timezone without cron',
      TimezoneWithoutCronHandlers,
      'cron.zone-only',
      'timezone',
      'Europe/Berlin',
    ],
    ['an unknown catchUp', BadCatchUpHandlers, 'cron.bad-catch-up', 'catchUp', 'all'],
  ])(
    'fails the boot on %s, naming the handler, option and value',
    async (_, fixture, type, option, value) => {
      const error = await bootFailure({ url: file.url, providers: [fixture] });
      expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
      const { option: named, value: given, message } = error as InvalidJobQueueOptionsError;
      expect(named).toBe(`@JobHandler('${type}') on ${fixture.name}#run: ${option}`);
      expect(given).toBe(value);
      expect(message).toContain(value);
      expect(message).toContain(`${fixture.name}#run`);
      expect(await observer.queue.schedules()).toEqual([]);
    },
  );
});

import { CronScheduler } from '../../libs/job-queue/src/cron/cron-scheduler';
import {
  createQueueTestingModule,
  QueueTestingModule,
  useQueueTestingModule,
} from '../support/test-app';

interface WarnSeam {
  logger: { warn(message: string): void };
}

/**
 * A fire time is missed only when no worker ticked after it came. Each test runs on a day of its
 * own: the ticks of one never make a run with another's (and nothing is truncated between them).
 */
describe('CronScheduler: late fire times are enqueued, missed ones only when no worker ticked', () => {
  const app = useQueueTestingModule();
  let other: QueueTestingModule;
  let warnings: jest.SpyInstance;
  const scheduler = () => app.module.get(CronScheduler);
  const runAts = async (): Promise<string[]> =>
    (await app.dataSource.query(`SELECT run_at FROM job_queue.jobs ORDER BY run_at`)).map(
      (job: { run_at: Date }) => job.run_at.toISOString(),
    );
  const standAt = (name: string, nextFireAt: Date) =>
    app.dataSource.query(`UPDATE job_queue.job_schedules SET next_fire_at = $2 WHERE name = $1`, [
      name,
      nextFireAt,
    ]);
  const seconds = (from: Date, first: number, last: number): string[] =>
    Array.from({ length: last - first + 1 }, (_, i) =>
      new Date(from.getTime() + (first + i) * 1_000).toISOString(),
    );
  const warned = (): string[] => warnings.mock.calls.map(([message]) => message as string);

  beforeAll(async () => {
    other = await createQueueTestingModule({ url: app.db.url });
  });
  afterAll(() => other?.close());
  beforeEach(async () => {
    await app.dataSource.query(
      `TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`,
    );
    await app.queue.schedule('every-second', '* * * * * *', 'tick', null, { catchUp: 'skip' });
    warnings = jest
      .spyOn((scheduler() as unknown as WarnSeam).logger, 'warn')
      .mockImplementation(() => undefined);
  });
  afterEach(() => warnings.mockRestore());

  it('gives every fire time a worker ticked after its own job, however late, and says the ticks fell behind', async () => {
    const start = new Date('2026-06-01T10:00:00Z');
    const at = (s: number) => new Date(start.getTime() + s * 1_000 + 500);
    // Workers tick every second from 10:00:00.5 (the other node, so this one's warnings are its
    // own) but do not reach the schedule: as when a tick is slow, or the schedule is one that
    // node cannot plan. The schedule stands at 10:00:01, not yet fired.
    await standAt('every-second', new Date('2030-01-01T00:00:00Z'));
    for (let s = 0; s <= 5; s++) await other.module.get(CronScheduler).tickOnce(at(s));
    await standAt('every-second', new Date(start.getTime() + 1_000));

    const [fired] = await scheduler().tickOnce(at(6));

    expect(fired.fireTimes.map((date) => date.toISOString())).toEqual(seconds(start, 1, 6));
    expect(await runAts()).toEqual(seconds(start, 1, 6));
    // 10:00:05 and :06 are on time by their lateness alone; 10:00:01 to :04 because workers ticked.
    expect(warned()).toEqual([expect.stringContaining('Cron ticks fell behind: 4 fire time(s)')]);
    expect(warned()[0]).toContain(
      '5500 ms after it came (schedule "every-second", 2026-06-01T10:00:01',
    );
    expect(warned().join('\n')).not.toContain('missed fire times');
  });

  it('counts fire times as missed when no worker ticked after they came, and says so', async () => {
    const start = new Date('2026-06-02T10:00:00Z');
    const at = (s: number) => new Date(start.getTime() + s * 1_000 + 500);
    // The last tick of any worker at 10:00:00.5; every worker down until 10:00:10.5.
    await standAt('every-second', new Date('2030-01-01T00:00:00Z'));
    await other.module.get(CronScheduler).tickOnce(at(0));
    await standAt('every-second', new Date(start.getTime() + 1_000));

    const [fired] = await scheduler().tickOnce(at(10));

    // Within MIN_LATENESS_MS of the tick: on time. The rest were missed (catchUp: skip).
    expect(fired.fireTimes.map((date) => date.toISOString())).toEqual(seconds(start, 9, 10));
    expect(warned()).toEqual([
      'Schedule "every-second" missed fire times from 2026-06-02T10:00:01.000Z while no worker ' +
        'ticked: enqueued 2 job(s), from 2026-06-02T10:00:09.000Z (catchUp: skip)',
    ]);
  });

  it('fires the fire times that came during a long tick, at the next, as late and not missed', async () => {
    const start = new Date('2026-06-03T10:00:00Z');
    const ticks = async () =>
      (await app.dataSource.query(`SELECT * FROM job_queue.job_schedule_ticks`))[0];
    await standAt('every-second', start);
    await scheduler().tickOnce(new Date(start.getTime() + 500));
    // A tick records when it ended: its time plus how long it took.
    const { ticked_at: ended } = await ticks();
    expect(ended.getTime()).toBeGreaterThan(start.getTime() + 500);
    expect(ended.getTime()).toBeLessThan(start.getTime() + 60_000);
    // As if that tick had taken 4 s: it ended at 10:00:04.5, and the next starts at 10:00:07.5.
    await app.dataSource.query(`UPDATE job_queue.job_schedule_ticks SET ticked_at = $1`, [
      new Date(start.getTime() + 4_500),
    ]);

    const [fired] = await scheduler().tickOnce(new Date(start.getTime() + 7_500));

    expect(fired.fireTimes.map((date) => date.toISOString())).toEqual(seconds(start, 1, 7));
    expect(await runAts()).toEqual(seconds(start, 0, 7));
    expect(warned()).toEqual([expect.stringContaining('Cron ticks fell behind: 5 fire time(s)')]);
  });
});

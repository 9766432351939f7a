import { CronScheduler } from '../../libs/job-queue/src/cron/cron-scheduler';
import { CronSpec, CronTimes, cronTimes } from '../../libs/job-queue/src/cron/cron-expression';
import {
  createQueueTestingModule,
  QueueTestingModule,
  useQueueTestingModule,
} from '../support/test-app';

/** Asia/Kathmandu as schedule() stores it: by its canonical name, which ICU versions differ on. */
const ZONE = new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kathmandu' }).resolvedOptions()
  .timeZone;

/** What a scheduler plans with, and logs to: reached here to make one node refuse a zone. */
interface SchedulerSeams {
  times(spec: CronSpec): CronTimes;
  logger: { warn(message: string): void };
}
const seams = (scheduler: CronScheduler) => scheduler as unknown as SchedulerSeams;

describe('CronScheduler: a node that cannot plan a schedule leaves it to the others', () => {
  const app = useQueueTestingModule();
  let other: QueueTestingModule;
  let healthy: CronScheduler;
  let refusing: CronScheduler;
  let warnings: jest.SpyInstance;
  const start = new Date('2026-06-01T10:00:00Z');
  const at = (seconds: number) => new Date(start.getTime() + seconds * 1_000);

  const row = async (name: string): Promise<Record<string, unknown>> =>
    (
      await app.dataSource.query(
        `SELECT to_jsonb(s) AS row FROM job_queue.job_schedules s WHERE name = $1`,
        [name],
      )
    )[0].row;
  const runAts = async (type: string): Promise<string[]> =>
    (
      await app.dataSource.query(
        `SELECT run_at FROM job_queue.jobs WHERE job_type = $1 ORDER BY run_at`,
        [type],
      )
    ).map((job: { run_at: Date }) => job.run_at.toISOString());

  beforeAll(async () => {
    other = await createQueueTestingModule({ url: app.db.url });
    healthy = app.module.get(CronScheduler);
    refusing = other.module.get(CronScheduler);
    // As a node whose Intl (older ICU or tzdata) refuses the zone: croner throws for it there.
    jest.spyOn(seams(refusing), 'times').mockImplementation((spec) => {
      if (spec.timezone === ZONE) throw new RangeError(`Invalid time zone specified: ${ZONE}`);
      return cronTimes(spec);
    });
  });
  afterAll(() => other?.close());
  beforeEach(async () => {
    await app.dataSource.query(
      `TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`,
    );
    warnings = jest.spyOn(seams(refusing).logger, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warnings.mockRestore());

  it('writes nothing to the row and warns once; the healthy node keeps firing it', async () => {
    await app.queue.schedule('nepal', '* * * * * *', 'nepal', null, { timezone: ZONE });
    await app.queue.schedule('utc', '* * * * * *', 'utc', null);
    await app.dataSource.query(`UPDATE job_queue.job_schedules SET next_fire_at = $1`, [start]);

    for (let second = 0; second < 5; second++) {
      const now = new Date(at(second).getTime() + 500);
      // The refusing node ticks first each second: the row must be as it found it.
      const before = await row('nepal');
      const fired = await refusing.tickOnce(now);
      expect(fired.map((schedule) => schedule.name)).toEqual(['utc']);
      expect(await row('nepal')).toEqual(before);
      expect((await healthy.tickOnce(now)).map((schedule) => schedule.name)).toEqual(['nepal']);
    }

    const everySecond = [0, 1, 2, 3, 4].map((second) => at(second).toISOString());
    expect(await runAts('nepal')).toEqual(everySecond);
    expect(await runAts('utc')).toEqual(everySecond);
    expect((await row('nepal')).next_fire_at).not.toBeNull();
    const lines = warnings.mock.calls.map(([message]) => message as string);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"nepal"');
    expect(lines[0]).toContain(`Invalid time zone specified: ${ZONE}`);
  });

  it('warns again once the period has passed, and for each schedule it cannot plan', async () => {
    for (const name of ['nepal-a', 'nepal-b']) {
      await app.queue.schedule(name, '0 * * * * *', name, null, { timezone: ZONE });
    }
    await app.dataSource.query(`UPDATE job_queue.job_schedules SET next_fire_at = $1`, [start]);

    await refusing.tickOnce(at(0.5));
    await refusing.tickOnce(at(30));
    expect(warnings).toHaveBeenCalledTimes(2); // one per schedule
    await refusing.tickOnce(at(61));
    expect(warnings).toHaveBeenCalledTimes(4);
    expect(await runAts('nepal-a')).toEqual([]);
  });
});

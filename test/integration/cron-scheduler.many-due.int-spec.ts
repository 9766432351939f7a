import { CronScheduler } from '../../libs/job-queue/src/cron/cron-scheduler';
import { DUE_SCHEDULES_LIMIT } from '../../libs/job-queue/src/cron/sql/due-schedules.query';
import {
  createQueueTestingModule,
  QueueTestingModule,
  useQueueTestingModule,
} from '../support/test-app';

/** Three full pages of due schedules: more than one tick read before it paged. */
const SCHEDULES = 3 * DUE_SCHEDULES_LIMIT;

describe('CronScheduler: one tick fires every schedule that is due, however many', () => {
  const app = useQueueTestingModule();
  let other: QueueTestingModule;
  const fireAt = new Date('2026-06-01T10:00:00Z');
  const now = new Date('2026-06-01T10:00:00.500Z');

  /** `SCHEDULES` every-second schedules, all standing at `fireAt`. */
  const standAllAt = (at: Date) =>
    app.dataSource.query(
      `INSERT INTO job_queue.job_schedules (name, cron, job_type, next_fire_at)
       SELECT 'every-second-' || pg_catalog.lpad(i::text, 3, '0'), '* * * * * *', 'tick', $1
       FROM pg_catalog.generate_series(1, $2::integer) AS i`,
      [at, SCHEDULES],
    );
  /** Jobs per fire time (run_at), over every schedule. */
  const jobsPerFireTime = async (): Promise<Array<{ run_at: Date; jobs: number }>> =>
    app.dataSource.query(
      `SELECT run_at, count(*)::int AS jobs FROM job_queue.jobs GROUP BY run_at ORDER BY run_at`,
    );
  const stillDue = async (): Promise<number> =>
    (
      await app.dataSource.query(
        `SELECT count(*)::int AS n FROM job_queue.job_schedules WHERE next_fire_at <= $1`,
        [now],
      )
    )[0].n;

  beforeAll(async () => {
    other = await createQueueTestingModule({ url: app.db.url });
  });
  afterAll(() => other?.close());
  beforeEach(() =>
    app.dataSource.query(`TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`),
  );

  it(`gives each of ${SCHEDULES} every-second schedules due at one now exactly one job in one tick`, async () => {
    await standAllAt(fireAt);

    const fired = await app.module.get(CronScheduler).tickOnce(now);

    expect(fired).toHaveLength(SCHEDULES);
    expect(new Set(fired.map((schedule) => schedule.name)).size).toBe(SCHEDULES);
    expect(fired.every((schedule) => schedule.jobIds.length === 1)).toBe(true);
    expect(await jobsPerFireTime()).toEqual([{ run_at: fireAt, jobs: SCHEDULES }]);
    expect(await stillDue()).toBe(0);
  });

  it('gives each exactly one job when two nodes tick the same now at once', async () => {
    await standAllAt(fireAt);

    const [mine, theirs] = await Promise.all([
      app.module.get(CronScheduler).tickOnce(now),
      other.module.get(CronScheduler).tickOnce(now),
    ]);

    // Between them they advanced every schedule once: none twice, none left behind.
    const names = [...mine, ...theirs].map((schedule) => schedule.name);
    expect(names).toHaveLength(SCHEDULES);
    expect(new Set(names).size).toBe(SCHEDULES);
    expect(await jobsPerFireTime()).toEqual([{ run_at: fireAt, jobs: SCHEDULES }]);
    expect(await stillDue()).toBe(0);
  });
});

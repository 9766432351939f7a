import { CronScheduler } from '../../libs/job-queue/src/cron/cron-scheduler';
import { RegisteredJobHandler } from '../../libs/job-queue/src/discovery/job-handler.registry';
import { syncHandlerSchedules } from '../../libs/job-queue/src/cron/handler-schedules';
import { useQueueTestingModule } from '../support/test-app';

/** Every timer API but Date stays real: pg, TypeORM and Jest keep their own clocks. */
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/** Runs `fn` with this process's Date `skewMs` off the real clock (the database's). */
async function withClockSkew<T>(skewMs: number, fn: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({
    now: Date.now() + skewMs,
    doNotFake: [...REAL_TIMERS],
    advanceTimers: true,
  });
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}

/**
 * A daily cron at the UTC time of day `offsetMs` from the database's now (whole seconds), and
 * that fire time: a node whose clock is off by more than the offset sees it on the wrong side.
 */
async function dailyAt(
  query: (sql: string) => Promise<Array<{ now: Date }>>,
  offsetMs: number,
): Promise<{ cron: string; fireAt: Date }> {
  const [{ now }] = await query(`SELECT now() AS now`);
  const fireAt = new Date(Math.ceil((now.getTime() + offsetMs) / 1_000) * 1_000);
  const cron = `${fireAt.getUTCSeconds()} ${fireAt.getUTCMinutes()} ${fireAt.getUTCHours()} * * *`;
  return { cron, fireAt };
}

const DAY_MS = 24 * 3_600_000;

describe('schedules: the first fire time comes from the database’s clock, not the node’s', () => {
  const app = useQueueTestingModule();
  const query = (sql: string) => app.dataSource.query(sql);

  beforeEach(() =>
    app.dataSource.query(`TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`),
  );

  it('schedule() on a node 30 s ahead: a fire time 15 s away is not skipped to the next day', async () => {
    const { cron, fireAt } = await dailyAt(query, 15_000);
    const schedule = await withClockSkew(30_000, () =>
      app.queue.schedule('soon', cron, 'report', null),
    );
    expect(schedule.nextFireAt).toEqual(fireAt);
  });

  it('schedule() on a node 30 s behind: a fire time 15 s ago is not due (nor missed) at once', async () => {
    const { cron, fireAt } = await dailyAt(query, -15_000);
    const schedule = await withClockSkew(-30_000, () =>
      app.queue.schedule('past', cron, 'report', null),
    );
    expect(schedule.nextFireAt).toEqual(new Date(fireAt.getTime() + DAY_MS));
    // The database's tick finds nothing due, so nothing is enqueued or reported missed.
    expect(await app.module.get(CronScheduler).tickOnce()).toEqual([]);
  });

  it('a handler schedule written by a node 30 s ahead starts at the database’s next fire time', async () => {
    const { cron, fireAt } = await dailyAt(query, 15_000);
    // As the registry holds a `@JobHandler('report.daily', { cron })` (only its schedule is read).
    const handlers = [
      {
        jobType: 'report.daily',
        options: { schedule: { cron, timezone: 'UTC', catchUp: 'once' } },
      },
    ] as unknown as RegisteredJobHandler[];
    await withClockSkew(30_000, () => syncHandlerSchedules(app.dataSource, 'job_queue', handlers));
    const [stored] = await app.queue.schedules();
    expect(stored).toMatchObject({ name: 'report.daily', source: 'handler', nextFireAt: fireAt });
  });
});

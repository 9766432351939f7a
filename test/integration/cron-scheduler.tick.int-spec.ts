import { JobStatus } from 'nest-pg-job-queue';
import { CronScheduler } from '../../libs/job-queue/src/cron/cron-scheduler';
import {
  createQueueTestingModule,
  QueueTestingModule,
  useQueueTestingModule,
} from '../support/test-app';

const DAY_MS = 24 * 3_600_000;

interface JobRow {
  id: string;
  job_type: string;
  data: unknown;
  priority: number;
  max_attempts: number | null;
  run_at: Date;
  status: string;
}

describe('CronScheduler: each fire time enqueues one job', () => {
  const app = useQueueTestingModule();
  let other: QueueTestingModule;
  const scheduler = () => app.module.get(CronScheduler);
  const jobs = (): Promise<JobRow[]> =>
    app.dataSource.query(
      `SELECT id::text, job_type, data, priority, max_attempts, run_at, status
       FROM job_queue.jobs ORDER BY run_at, id`,
    );
  /** Sets where the schedule stands, as if it had last fired before `nextFireAt`. */
  const standAt = (name: string, nextFireAt: Date) =>
    app.dataSource.query(`UPDATE job_queue.job_schedules SET next_fire_at = $2 WHERE name = $1`, [
      name,
      nextFireAt,
    ]);

  beforeAll(async () => {
    other = await createQueueTestingModule({ url: app.db.url });
  });
  afterAll(() => other?.close());
  beforeEach(() =>
    app.dataSource.query(`TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`),
  );

  it('enqueues the due fire time with the schedule’s data and options, then nothing until the next', async () => {
    await app.queue.schedule(
      'hourly',
      '0 * * * *',
      'report',
      { kind: 'hourly' },
      {
        priority: 7,
        maxAttempts: 2,
      },
    );
    const fireAt = new Date('2026-06-01T10:00:00Z');
    await standAt('hourly', fireAt);

    expect(await scheduler().tickOnce(new Date('2026-06-01T09:59:59Z'))).toEqual([]);
    const fired = await scheduler().tickOnce(new Date('2026-06-01T10:00:00.300Z'));
    expect(fired).toEqual([
      {
        name: 'hourly',
        fireTimes: [fireAt],
        jobIds: [expect.any(String)],
        nextFireAt: new Date('2026-06-01T11:00:00Z'),
      },
    ]);
    expect(await jobs()).toEqual([
      {
        id: fired[0].jobIds[0],
        job_type: 'report',
        data: { kind: 'hourly' },
        priority: 7,
        max_attempts: 2,
        run_at: fireAt, // the fire time: job.runAt tells the handler which one it serves
        status: JobStatus.Pending,
      },
    ]);
    // Ticking again, by this node or any other, finds nothing due.
    expect(await scheduler().tickOnce(new Date('2026-06-01T10:00:00.900Z'))).toEqual([]);
    expect(
      await other.module.get(CronScheduler).tickOnce(new Date('2026-06-01T10:30:00Z')),
    ).toEqual([]);
    const [stored] = await app.queue.schedules();
    expect(stored).toMatchObject({
      lastFireAt: fireAt,
      nextFireAt: new Date('2026-06-01T11:00:00Z'),
    });
    expect(await jobs()).toHaveLength(1);
  });

  it('gives the same fire time one job when many nodes tick it at once', async () => {
    await app.queue.schedule('every-second', '* * * * * *', 'tick', null);
    const start = new Date('2026-06-01T10:00:00Z');
    await standAt('every-second', start);
    const nodes = [scheduler(), other.module.get(CronScheduler)];
    for (let second = 0; second < 20; second++) {
      const now = new Date(start.getTime() + second * 1_000 + 500);
      // Four ticks at the same instant from two apps (two pools): all race for the same row.
      await Promise.all([...nodes, ...nodes].map((node) => node.tickOnce(now)));
    }
    const rows = await jobs();
    expect(rows.map((row) => row.run_at.toISOString())).toEqual(
      Array.from({ length: 20 }, (_, i) => new Date(start.getTime() + i * 1_000).toISOString()),
    );
  });

  it('on return after fire times were missed: one job (catchUp once) or none (skip)', async () => {
    await app.queue.schedule('once', '0 6 * * *', 'daily', { p: 'once' }, { catchUp: 'once' });
    await app.queue.schedule('skip', '0 6 * * *', 'daily', { p: 'skip' }, { catchUp: 'skip' });
    // Last fired on 2026-05-28 06:00; every node down through three more fire times.
    for (const name of ['once', 'skip']) await standAt(name, new Date('2026-05-29T06:00:00Z'));
    const back = new Date('2026-06-01T12:00:00Z');

    const fired = await scheduler().tickOnce(back);
    expect(fired.map(({ name, fireTimes }) => ({ name, fireTimes }))).toEqual([
      { name: 'once', fireTimes: [new Date('2026-06-01T06:00:00Z')] },
      { name: 'skip', fireTimes: [] },
    ]);
    expect((await jobs()).map((row) => row.data)).toEqual([{ p: 'once' }]);
    const schedules = await app.queue.schedules();
    expect(schedules.map((s) => [s.name, s.nextFireAt, s.lastFireAt])).toEqual([
      ['once', new Date('2026-06-02T06:00:00Z'), new Date('2026-06-01T06:00:00Z')],
      ['skip', new Date('2026-06-02T06:00:00Z'), null],
    ]);
    // And not again on the next tick, nor on another node.
    expect(await other.module.get(CronScheduler).tickOnce(back)).toEqual([]);
    expect(await jobs()).toHaveLength(1);
  });

  it('enqueues a fire time that came while the schedule was being replaced only once, from the new row', async () => {
    await app.queue.schedule('r', '0 6 * * *', 'r', { v: 1 });
    await standAt('r', new Date('2026-06-01T06:00:00Z'));
    // A node reads the row, then schedule() replaces the cron before it writes: its write loses.
    await app.queue.schedule('r', '0 7 * * *', 'r', { v: 2 });
    const fired = await scheduler().tickOnce(new Date('2026-06-01T06:00:01Z'));
    expect(fired).toEqual([]); // the new cron's next fire time is in the future
    expect(await jobs()).toEqual([]);
  });

  it('leaves a schedule whose stored cron it cannot read (edited by hand) as it is, and fires the others', async () => {
    await app.queue.schedule('good', '0 6 * * *', 'good', null);
    await app.queue.schedule('broken', '0 6 * * *', 'broken', null);
    await app.dataSource.query(
      `UPDATE job_queue.job_schedules SET next_fire_at = '2026-06-01T06:00:00Z',
         cron = CASE name WHEN 'broken' THEN 'not a cron' ELSE cron END`,
    );
    const fired = await scheduler().tickOnce(new Date('2026-06-01T06:00:01Z'));
    expect(fired.map((f) => [f.name, f.fireTimes.length])).toEqual([['good', 1]]);
    // Not stopped (no NULL): another node, or this one once schedule() writes it again, fires it.
    const broken = (await app.queue.schedules()).find((s) => s.name === 'broken');
    expect(broken?.nextFireAt).toEqual(new Date('2026-06-01T06:00:00Z'));
    expect((await jobs()).map((row) => row.job_type)).toEqual(['good']);
  });

  it('enqueues a fire time later than the database’s clock as scheduled', async () => {
    await app.queue.schedule('future', '0 6 * * *', 'f', null);
    const fireAt = new Date(Date.now() + 2 * DAY_MS);
    fireAt.setUTCHours(6, 0, 0, 0);
    await standAt('future', fireAt);
    await scheduler().tickOnce(new Date(fireAt.getTime() + 100));
    expect((await jobs()).map((row) => [row.run_at, row.status])).toEqual([
      [fireAt, JobStatus.Scheduled],
    ]);
  });
});

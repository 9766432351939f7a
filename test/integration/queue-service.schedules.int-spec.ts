import { JobSchedule } from 'nest-pg-job-queue';
import { refusal } from '../support/refusal';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService: schedule, unschedule, schedules', () => {
  const app = useQueueTestingModule();

  beforeEach(() =>
    app.dataSource.query(`TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`),
  );

  it('stores a schedule and lists it with its next fire time in its zone', async () => {
    const before = Date.now();
    const schedule = await app.queue.schedule(
      'nightly-export',
      '0 6 * * *',
      'export.run',
      { format: 'csv' },
      { timezone: 'Europe/Berlin', catchUp: 'skip', priority: 150, maxAttempts: 2 },
    );
    expect(schedule).toEqual<JobSchedule>({
      name: 'nightly-export',
      cron: '0 6 * * *',
      timezone: 'Europe/Berlin',
      catchUp: 'skip',
      jobType: 'export.run',
      data: { format: 'csv' },
      priority: 150,
      maxAttempts: 2,
      source: 'schedule',
      nextFireAt: expect.any(Date),
      lastFireAt: null,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    // 06:00 in Berlin is 05:00Z in winter, 04:00Z in summer; within the next day.
    const next = schedule.nextFireAt!;
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime()).toBeLessThanOrEqual(before + 24 * 3_600_000);
    expect([4, 5]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(0);
    expect(await app.queue.schedules()).toEqual([schedule]);
  });

  it('defaults to UTC, catch-up once, priority 100, and takes 6-field (seconds) expressions', async () => {
    const schedule = await app.queue.schedule('tick', '*/5 * * * * *', 'tick', null);
    expect(schedule).toMatchObject({ timezone: 'UTC', catchUp: 'once', priority: 100 });
    expect(schedule.maxAttempts).toBeNull();
    expect(schedule.data).toBeNull();
    expect(schedule.nextFireAt!.getUTCSeconds() % 5).toBe(0);
    expect(schedule.nextFireAt!.getTime() - Date.now()).toBeLessThanOrEqual(5_000);
  });

  it('replaces a schedule of the same name; the same cron and zone keep the next fire time', async () => {
    await app.queue.schedule('report', '0 6 * * *', 'report', { v: 1 });
    // As if it last fired long ago and three fire times were missed: kept for the catch-up.
    const missed = new Date(Date.now() - 3 * 24 * 3_600_000);
    await app.dataSource.query(
      `UPDATE job_queue.job_schedules SET next_fire_at = $1 WHERE name = 'report'`,
      [missed],
    );
    const again = await app.queue.schedule(
      'report',
      '0 6 * * *',
      'report',
      { v: 2 },
      { priority: 5 },
    );
    expect(again).toMatchObject({ data: { v: 2 }, priority: 5, nextFireAt: missed });

    const moved = await app.queue.schedule('report', '0 7 * * *', 'report', { v: 3 });
    expect(moved.nextFireAt!.getTime()).toBeGreaterThan(Date.now());
    expect(moved.nextFireAt!.getUTCHours()).toBe(7);
    expect(await app.queue.schedules()).toHaveLength(1);
  });

  it('unschedules by name, saying whether there was one, and leaves enqueued jobs alone', async () => {
    await app.queue.schedule('a', '0 6 * * *', 'a', {});
    await app.queue.schedule('b', '0 6 * * *', 'b', {});
    const job = await app.queue.enqueue('a', {});
    expect(await app.queue.unschedule('a')).toBe(true);
    expect(await app.queue.unschedule('a')).toBe(false);
    expect((await app.queue.schedules()).map((s) => s.name)).toEqual(['b']);
    expect((await app.queue.getJob(job.id)).id).toBe(job.id);
  });

  it.each([
    ['a cron expression that is not one', 'every day at six', {}, 'cron', 'every day at six'],
    ['a minute out of range', '61 * * * *', {}, 'cron', '61 * * * *'],
    ['a 7-field expression (years)', '0 0 0 1 1 * 2030', {}, 'cron', '0 0 0 1 1 * 2030'],
    ['an expression that never fires', '0 0 30 2 *', {}, 'cron', '0 0 30 2 *'],
    ['an empty expression', ' ', {}, 'cron', ' '],
    ['an unknown time zone', '0 6 * * *', { timezone: 'Mars/Olympus' }, 'timezone', 'Mars/Olympus'],
    ['a time zone that is no string', '0 6 * * *', { timezone: 2 }, 'timezone', 2],
    ['an unknown catchUp', '0 6 * * *', { catchUp: 'all' }, 'catchUp', 'all'],
    ['a priority that is no integer', '0 6 * * *', { priority: 1.5 }, 'priority', 1.5],
    ['maxAttempts 0', '0 6 * * *', { maxAttempts: 0 }, 'maxAttempts', 0],
  ])('refuses %s, naming the field and the value', async (_, cron, opts, field, value) => {
    const error = await refusal(app.queue.schedule('bad', cron, 'bad', {}, opts as object));
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toContain(field);
    expect(error.message).toContain(typeof value === 'string' ? value : String(value));
    expect(await app.queue.schedules()).toEqual([]);
  });

  it('refuses an unknown option, naming it and the known ones', async () => {
    const opts = { timezone: 'UTC', every: 'day' } as object;
    const error = await refusal(app.queue.schedule('n', '0 6 * * *', 't', {}, opts));
    expect(error.field).toBe('every');
    expect(error.message).toContain('"every"');
    expect(error.message).toContain('timezone, catchUp, priority, maxAttempts');
  });

  it('refuses a bad name or type, and names data only by its path', async () => {
    expect((await refusal(app.queue.schedule('', '0 6 * * *', 't', {}))).field).toBe('name');
    expect((await refusal(app.queue.schedule('n', '0 6 * * *', ' ', {}))).field).toBe('type');
    const secret = `secret\u0000text`;
    const error = await refusal(app.queue.schedule('n', '0 6 * * *', 't', { secret }));
    expect(error.field).toBe('data.secret');
    expect(error.message).not.toContain('secret\u0000');
    expect(JSON.stringify(error.value)).not.toContain('secret');
    expect((await refusal(app.queue.unschedule(' '))).field).toBe('name');
  });

  it("refuses to replace a @JobHandler's schedule, naming it", async () => {
    await app.dataSource.query(
      `INSERT INTO job_queue.job_schedules (name, cron, job_type, source, next_fire_at)
       VALUES ('report.daily', '0 6 * * *', 'report.daily', 'handler', now() + interval '1 hour')`,
    );
    const error = await refusal(
      app.queue.schedule('report.daily', '* * * * *', 'report.daily', {}),
    );
    expect(error.field).toBe('name');
    expect(error.message).toContain('@JobHandler');
    const [stored] = await app.queue.schedules();
    expect(stored).toMatchObject({ cron: '0 6 * * *', source: 'handler' });
  });
});

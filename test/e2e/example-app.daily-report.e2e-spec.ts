import { QueueService } from 'nest-pg-job-queue';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

describe('example app: the daily report on cron', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp();
  });
  afterAll(() => example?.close());

  it('boots with the report.daily schedule, 06:00 in Berlin, and reports the day before its fire time', async () => {
    const queue = example.app.get(QueueService);
    const [schedule] = await queue.schedules();
    expect(schedule).toMatchObject({
      name: 'report.daily',
      jobType: 'report.daily',
      cron: '0 6 * * *',
      timezone: 'Europe/Berlin',
      catchUp: 'once',
      source: 'handler',
    });

    // As if every instance had been down for the last three days: the app's own ticker makes
    // the missed days up with one job, for the newest fire time.
    await example.sql.query(
      `UPDATE job_queue.job_schedules SET next_fire_at = now() - interval '3 days'`,
    );
    const { body } = await waitFor(
      async () => {
        const response = await example.http().get('/jobs?type=report.daily').expect(200);
        return response.body.items.length > 0 && response.body.items[0].status === 'completed'
          ? response
          : undefined;
      },
      { timeoutMs: 15_000, description: 'the daily report job to complete' },
    );
    expect(body.items).toHaveLength(1);
    const [job] = body.items;
    const fireAt = new Date(job.runAt);
    // 06:00 in Berlin: 05:00Z in winter, 04:00Z in summer; the newest one before now.
    expect(fireAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(fireAt.getTime()).toBeGreaterThan(Date.now() - 24 * 3_600_000);
    expect([4, 5]).toContain(fireAt.getUTCHours());
    expect(fireAt.getUTCMinutes()).toBe(0);
    const dayBefore = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(
      new Date(fireAt.getTime() - 24 * 3_600_000),
    );
    const { body: finished } = await example.http().get(`/jobs/${job.id}`).expect(200);
    expect(finished.result).toEqual({ day: dayBefore, rows: 1200 });
    const [after] = await queue.schedules();
    expect(after.lastFireAt).toEqual(fireAt);
    expect(after.nextFireAt!.getTime()).toBeGreaterThan(Date.now());
  });
});

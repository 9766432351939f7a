import { InvalidJobInputError, JobStatus, ScheduleNotFoundError } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService.runSchedule', () => {
  const app = useQueueTestingModule();

  beforeEach(() =>
    app.dataSource.query(`TRUNCATE job_queue.job_schedules, job_queue.jobs, job_queue.job_events`),
  );

  it("enqueues the schedule's job now, with its type, data, priority and attempts", async () => {
    await app.queue.schedule(
      'nightly-export',
      '0 6 * * *',
      'export.run',
      { format: 'csv' },
      { priority: 150, maxAttempts: 2 },
    );
    const [{ now }]: Array<{ now: Date }> = await app.dataSource.query(`SELECT now() AS now`);
    const job = await app.queue.runSchedule('nightly-export');
    expect(job).toMatchObject({
      jobType: 'export.run',
      data: { format: 'csv' },
      priority: 150,
      maxAttempts: 2,
      status: JobStatus.Pending,
      attempts: 0,
      uniqueKey: null,
    });
    expect(job.runAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
    expect(job.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(await app.queue.getJob(job.id)).toEqual(job);
  });

  it('leaves the next and last fire times as they were', async () => {
    const before = await app.queue.schedule('tick', '0 0 1 1 *', 'tick', null);
    await app.queue.runSchedule('tick');
    const [after] = await app.queue.schedules();
    expect(after.nextFireAt).toEqual(before.nextFireAt);
    expect(after.lastFireAt).toBeNull();
    expect(after.updatedAt).toEqual(before.updatedAt);
  });

  it('enqueues a job at each call, as each fire does', async () => {
    await app.queue.schedule('tick', '0 0 1 1 *', 'tick', { n: 1 });
    const first = await app.queue.runSchedule('tick');
    const second = await app.queue.runSchedule('tick');
    expect(second.id).not.toBe(first.id);
    const { jobs } = await app.queue.listJobs({ type: 'tick' });
    expect(jobs.map((job) => job.id)).toEqual([second.id, first.id]);
  });

  it("runs a handler's schedule (named after its type) with its module defaults", async () => {
    await app.dataSource.query(
      `INSERT INTO job_queue.job_schedules (name, cron, timezone, catch_up, job_type, data,
                                            priority, max_attempts, source, next_fire_at)
       VALUES ('report.daily', '0 6 * * *', 'UTC', 'once', 'report.daily', 'null', 100, NULL,
               'handler', now() + interval '1 day')`,
    );
    const job = await app.queue.runSchedule('report.daily');
    expect(job).toMatchObject({ jobType: 'report.daily', data: null, maxAttempts: null });
  });

  it('rejects an unknown name with ScheduleNotFoundError naming it', async () => {
    const error = await app.queue.runSchedule('nope').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ScheduleNotFoundError);
    expect(error).toMatchObject({
      scheduleName: 'nope',
      message: expect.stringContaining("'nope'"),
    });
    expect((await app.queue.listJobs()).jobs).toEqual([]);
  });

  it('refuses a name no schedule could have, naming the argument', async () => {
    const error = await app.queue.runSchedule('  ').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toMatchObject({ field: 'name', value: '  ' });
  });
});

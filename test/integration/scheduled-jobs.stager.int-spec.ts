import { Client } from 'pg';
import { JobStateConflictError, JobStatus } from 'nest-pg-job-queue';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { ScheduledJobStager } from '../../libs/job-queue/src/maintenance/scheduled-job-stager';
import {
  STAGE_BATCH_SIZE,
  stageScheduledJobs,
} from '../../libs/job-queue/src/sql/stage-scheduled-jobs.query';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const HOUR_MS = 3_600_000;

/** Status of each job by id, read from the table. */
async function statuses(
  query: (sql: string) => Promise<Array<{ id: string; status: string }>>,
): Promise<Record<string, string>> {
  const rows = await query(`SELECT id::text AS id, status FROM job_queue.jobs ORDER BY id`);
  return Object.fromEntries(rows.map((row) => [row.id, row.status]));
}

describe('scheduled jobs: enqueue, the stager, cancel, retry and stats', () => {
  const app = useQueueTestingModule();
  const all = () => statuses((sql) => app.dataSource.query(sql));

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  it('enqueues a job due later as scheduled and one due now (or earlier) as pending', async () => {
    const later = await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    const at = await app.queue.enqueue('t', {}, { runAt: new Date(Date.now() + HOUR_MS) });
    const now = await app.queue.enqueue('t', {});
    const past = await app.queue.enqueue('t', {}, { runAt: new Date(Date.now() - HOUR_MS) });
    const [many1, many2] = await app.queue.enqueueMany([
      { type: 't', data: {}, delayMs: HOUR_MS },
      { type: 't', data: {} },
    ]);

    expect([later, at, now, past, many1, many2].map((job) => job.status)).toEqual([
      JobStatus.Scheduled,
      JobStatus.Scheduled,
      JobStatus.Pending,
      JobStatus.Pending,
      JobStatus.Scheduled,
      JobStatus.Pending,
    ]);
    // What enqueue returned is what the row holds.
    expect(await all()).toEqual({
      [later.id]: 'scheduled',
      [at.id]: 'scheduled',
      [now.id]: 'pending',
      [past.id]: 'pending',
      [many1.id]: 'scheduled',
      [many2.id]: 'pending',
    });
  });

  it('stages only the jobs due by the given now, and leaves the others scheduled', async () => {
    const soon = await app.queue.enqueue('t', {}, { delayMs: 60_000 });
    const later = await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    const stager = app.module.get(ScheduledJobStager);

    expect(await stager.stageOnce()).toBe(0); // by the database's now(), neither is due
    expect(await stager.stageOnce(new Date(soon.runAt.getTime() - 1))).toBe(0);
    // (Dates hold milliseconds, run_at microseconds: a millisecond past it.)
    const due = new Date(soon.runAt.getTime() + 1);
    expect(await stager.stageOnce(due)).toBe(1);
    expect(await all()).toEqual({ [soon.id]: 'pending', [later.id]: 'scheduled' });
    expect(await stager.stageOnce(due)).toBe(0);

    expect(await stager.stageOnce(new Date(later.runAt.getTime() + 1))).toBe(1);
    expect(await all()).toEqual({ [soon.id]: 'pending', [later.id]: 'pending' });
  });

  it('moves at most a batch per statement, and a pass stages a larger backlog batch by batch', async () => {
    await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, run_at)
       SELECT 't', 'scheduled', now() - interval '1 second'
       FROM generate_series(1, $1::int)`,
      [STAGE_BATCH_SIZE + 5],
    );
    expect(await stageScheduledJobs(app.dataSource, DEFAULT_SCHEMA, null, 3)).toBe(3);
    expect(await stageScheduledJobs(app.dataSource, DEFAULT_SCHEMA, null)).toBe(STAGE_BATCH_SIZE);
    expect(await app.module.get(ScheduledJobStager).stageOnce()).toBe(2);
    const [{ scheduled }] = await app.dataSource.query<Array<{ scheduled: number }>>(
      `SELECT count(*)::int AS scheduled FROM job_queue.jobs WHERE status = 'scheduled'`,
    );
    expect(scheduled).toBe(0);
  });

  it('skips rows another stager holds, and notifies the insert channel when it moved jobs', async () => {
    const due = await app.queue.enqueue('t', {}, { delayMs: 60_000 });
    const other = await app.queue.enqueue('t', {}, { delayMs: 60_000 });
    const listener = new Client({ connectionString: app.db.url });
    const holder = new Client({ connectionString: app.db.url });
    await Promise.all([listener.connect(), holder.connect()]);
    const notifications: string[] = [];
    listener.on('notification', (message) => notifications.push(message.channel));
    try {
      await listener.query(`LISTEN ${DEFAULT_SCHEMA}_jobs_inserted`);
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE`, [other.id]);

      const at = new Date(due.runAt.getTime() + 1_000);
      expect(await stageScheduledJobs(app.dataSource, DEFAULT_SCHEMA, at)).toBe(1);
      expect(await all()).toEqual({ [due.id]: 'pending', [other.id]: 'scheduled' });
      await waitFor(() => notifications.length === 1, { description: 'the notification' });

      await holder.query('ROLLBACK');
      expect(await stageScheduledJobs(app.dataSource, DEFAULT_SCHEMA, at)).toBe(1);
      await waitFor(() => notifications.length === 2, { description: 'a second notification' });
      // Nothing moved: no notification.
      expect(await stageScheduledJobs(app.dataSource, DEFAULT_SCHEMA, at)).toBe(0);
      await listener.query('SELECT 1'); // a round trip: a notification sent would be in by now
      expect(notifications).toEqual([
        `${DEFAULT_SCHEMA}_jobs_inserted`,
        `${DEFAULT_SCHEMA}_jobs_inserted`,
      ]);
    } finally {
      await Promise.all([listener.end(), holder.end()]);
    }
  });

  it('cancels a scheduled job, which the stager then leaves alone; retry runs it now', async () => {
    const job = await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    const cancelled = await app.queue.cancel(job.id);
    expect(cancelled.status).toBe(JobStatus.Cancelled);
    expect(
      await app.module.get(ScheduledJobStager).stageOnce(new Date(Date.now() + 2 * HOUR_MS)),
    ).toBe(0);
    expect(await all()).toEqual({ [job.id]: 'cancelled' });

    const retried = await app.queue.retry(job.id);
    expect(retried.status).toBe(JobStatus.Pending);
    expect(retried.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it('refuses to retry a scheduled job (it is unfinished), naming its status', async () => {
    const job = await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    const error = await app.queue.retry(job.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobStateConflictError);
    expect((error as Error).message).toContain('scheduled');
    expect(await all()).toEqual({ [job.id]: 'scheduled' });
  });

  it('keeps a scheduled job’s unique key: a duplicate returns it', async () => {
    const first = await app.queue.enqueue('t', { n: 1 }, { uniqueKey: 'k', delayMs: HOUR_MS });
    const second = await app.queue.enqueue('t', { n: 2 }, { uniqueKey: 'k' });
    expect(second.id).toBe(first.id);
    expect(second.status).toBe(JobStatus.Scheduled);
  });

  it('counts scheduled jobs in stats()', async () => {
    await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    await app.queue.enqueue('t', {}, { delayMs: HOUR_MS });
    await app.queue.enqueue('t', {});
    const stats = await app.queue.stats({ maxAgeMs: 0 });
    expect(stats.t).toMatchObject({ scheduled: 2, pending: 1, claimed: 0 });
  });
});

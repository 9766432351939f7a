import { Job, JobStatus } from 'nest-pg-job-queue';
import { ScheduledJobStager } from '../../libs/job-queue/src/maintenance/scheduled-job-stager';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService: management API', () => {
  const app = useQueueTestingModule();

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  /** Sets columns by SQL, as a worker (or time passing) would. */
  const update = (id: string, assignments: string): Promise<unknown> =>
    app.dataSource.query(`UPDATE job_queue.jobs SET ${assignments} WHERE id = $1`, [id]);

  const dbNow = async (): Promise<Date> =>
    (await app.dataSource.query(`SELECT now() AS now`))[0].now;

  describe('enqueue and getJob', () => {
    it('stores the job with its defaults and reads it back as a Job', async () => {
      const before = await dbNow();
      const enqueued = await app.queue.enqueue('report_generation', {
        month: '2026-11',
        n: [1, 2],
      });
      const job = await app.queue.getJob(enqueued.id);

      expect(job).toBeInstanceOf(Job);
      expect(job).toEqual(enqueued);
      expect(job).toMatchObject({
        id: expect.stringMatching(/^\d+$/),
        jobType: 'report_generation',
        data: { month: '2026-11', n: [1, 2] },
        status: JobStatus.Pending,
        priority: 100,
        progress: 0,
        currentStage: null,
        eventsCount: 0,
        workerId: null,
        claimedAt: null,
        startedAt: null,
        completedAt: null,
        heartbeatAt: null,
        attempts: 0,
        maxAttempts: null,
        lastError: null,
        uniqueKey: null,
        concurrencyKey: null,
        result: null,
      });
      expect(job.createdAt).toBeInstanceOf(Date);
      expect(job.createdAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
      // Runnable at once: run_at is the insert's now(), like created_at.
      expect(job.runAt.getTime()).toBe(job.createdAt.getTime());
      expect(job.updatedAt.getTime()).toBe(job.createdAt.getTime());
    });

    it('stores priority, maxAttempts and uniqueKey as given', async () => {
      const job = await app.queue.enqueue('t', null, {
        priority: -5,
        maxAttempts: 7,
        uniqueKey: 'mgmt-key',
      });
      expect(await app.queue.getJob(job.id)).toMatchObject({
        data: null,
        priority: -5,
        maxAttempts: 7,
        uniqueKey: 'mgmt-key',
      });
    });

    it('stores concurrencyKey as given, in its own column', async () => {
      const job = await app.queue.enqueue('keyed', {}, { concurrencyKey: 'tenant-42' });
      expect(job.concurrencyKey).toBe('tenant-42');
      expect(await app.queue.getJob(job.id)).toEqual(job);
      const [row] = await app.dataSource.query(
        `SELECT concurrency_key, unique_key FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      expect(row).toEqual({ concurrency_key: 'tenant-42', unique_key: null });
    });

    it('delayMs puts run_at exactly that far after the insert, by the database clock', async () => {
      const job = await app.queue.enqueue('delayed', {}, { delayMs: 90_000 });
      expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(90_000);
      const [{ future }] = await app.dataSource.query(
        `SELECT run_at > now() + interval '80 seconds' AS future FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      expect(future).toBe(true);
    });

    it('runAt stores that instant', async () => {
      const runAt = new Date(Date.now() + 24 * 3_600_000);
      const job = await app.queue.enqueue('scheduled', {}, { runAt });
      expect((await app.queue.getJob(job.id)).runAt.getTime()).toBe(runAt.getTime());
      const [{ future }] = await app.dataSource.query(
        `SELECT run_at > now() + interval '23 hours' AS future FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      expect(future).toBe(true);
    });

    it('a delayed job waits as scheduled: not claimable until staged at run_at, then it is', async () => {
      const delayed = await app.queue.enqueue('claim_me', {}, { delayMs: 60_000 });
      expect(delayed.status).toBe(JobStatus.Scheduled);
      const claim = (at: Date): Promise<Array<{ id: string }>> =>
        app.dataSource.query(
          `SELECT id FROM job_queue.claim_job_batch('w', ARRAY['claim_me'], 10, $1)`,
          [at],
        );

      // (Dates hold milliseconds, run_at microseconds: step 1 ms either side.)
      const stage = (at: Date) => app.module.get(ScheduledJobStager).stageOnce(at);
      expect(await stage(new Date(delayed.runAt.getTime() - 1))).toBe(0);
      expect(await claim(new Date(delayed.runAt.getTime() + 1))).toEqual([]); // still scheduled
      expect(await stage(new Date(delayed.runAt.getTime() + 1))).toBe(1);
      expect(await claim(new Date(delayed.runAt.getTime() + 1))).toEqual([{ id: delayed.id }]);
    });
  });

  describe('updateProgress', () => {
    it('records progress and stage, counts the event and touches updated_at', async () => {
      const job = await app.queue.enqueue('progress', {});
      await update(job.id, `status = 'running', updated_at = now() - interval '1 hour'`);

      const first = await app.queue.updateProgress(job.id, 40, 'aggregating');
      expect(first).toMatchObject({
        id: job.id,
        progress: 40,
        currentStage: 'aggregating',
        eventsCount: 1,
        status: JobStatus.Running,
      });
      expect(first.updatedAt.getTime()).toBeGreaterThan(job.updatedAt.getTime());

      // No stage: the previous one stays. Fractions are rounded (smallint column).
      const second = await app.queue.updateProgress(job.id, 66.6);
      expect(second).toMatchObject({ progress: 67, currentStage: 'aggregating', eventsCount: 2 });

      const third = await app.queue.updateProgress(job.id, 100, 'done');
      expect(third).toMatchObject({ progress: 100, currentStage: 'done', eventsCount: 3 });
      expect(await app.queue.getJob(job.id)).toEqual(third);
    });

    it('accepts a waiting job (no run holds it)', async () => {
      const job = await app.queue.enqueue('progress', {}, { concurrencyKey: 'tenant-1' });
      await update(job.id, `status = 'waiting'`);
      expect(await app.queue.updateProgress(job.id, 10, 'queued')).toMatchObject({
        status: JobStatus.Waiting,
        progress: 10,
        currentStage: 'queued',
      });
    });

    it('accepts a blocked job (its dependencies unfinished)', async () => {
      const job = await app.queue.enqueue('progress', {});
      await update(
        job.id,
        `status = 'blocked', unfinished_dependencies = 1, on_dependency_failure = 'fail'`,
      );
      expect(await app.queue.updateProgress(job.id, 5, 'waiting for its inputs')).toMatchObject({
        status: JobStatus.Blocked,
        progress: 5,
        currentStage: 'waiting for its inputs',
        unfinishedDependencies: 1,
      });
    });

    it('accepts 0 and a pending job', async () => {
      const job = await app.queue.enqueue('progress', {});
      expect(await app.queue.updateProgress(job.id, 0, '')).toMatchObject({
        progress: 0,
        currentStage: '',
        eventsCount: 1,
      });
    });
  });

  describe('cancel', () => {
    it.each([JobStatus.Pending, JobStatus.Waiting, JobStatus.Claimed, JobStatus.Running])(
      'moves a %s job to cancelled',
      async (status) => {
        const job = await app.queue.enqueue('cancel_me', {});
        await update(job.id, `status = '${status}'`);

        const cancelled = await app.queue.cancel(job.id);

        expect(cancelled).toMatchObject({ id: job.id, status: JobStatus.Cancelled });
        expect(cancelled.completedAt).toBeInstanceOf(Date);
        expect(await app.queue.getJob(job.id)).toEqual(cancelled);
      },
    );

    it('frees the unique key', async () => {
      const job = await app.queue.enqueue('cancel_me', {}, { uniqueKey: 'cancel-key' });
      await app.queue.cancel(job.id);
      const next = await app.queue.enqueue('cancel_me', {}, { uniqueKey: 'cancel-key' });
      expect(next.id).not.toBe(job.id);
    });
  });

  describe('retry', () => {
    it('puts a failed job back to pending with no attempts, runnable now', async () => {
      const job = await app.queue.enqueue('retry_me', {}, { maxAttempts: 2 });
      await update(
        job.id,
        `status = 'failed', attempts = 2, worker_id = 'w1', claimed_at = now(), started_at = now(),
         heartbeat_at = now(), completed_at = now(), last_error = 'boom',
         run_at = now() + interval '1 day'`,
      );
      const now = await dbNow();

      const retried = await app.queue.retry(job.id);

      expect(retried).toMatchObject({
        id: job.id,
        status: JobStatus.Pending,
        attempts: 0,
        maxAttempts: 2,
        workerId: null,
        claimedAt: null,
        startedAt: null,
        heartbeatAt: null,
        completedAt: null,
      });
      expect(retried.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(retried.runAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
      expect(await app.queue.getJob(job.id)).toEqual(retried);
    });

    it('puts a cancelled job back to pending', async () => {
      const job = await app.queue.enqueue('retry_me', {});
      await app.queue.cancel(job.id);
      expect(await app.queue.retry(job.id)).toMatchObject({
        status: JobStatus.Pending,
        attempts: 0,
      });
    });
  });

  describe('stats', () => {
    it('counts by type and status, every status present', async () => {
      expect(await app.queue.stats({ maxAgeMs: 0 })).toEqual({});

      const emails = await app.queue.enqueueMany(
        Array.from({ length: 5 }, (_, i) => ({ type: 'email', data: i })),
      );
      const reports = await app.queue.enqueueMany(
        Array.from({ length: 3 }, (_, i) => ({ type: 'report', data: i })),
      );
      await update(emails[0].id, `status = 'completed'`);
      await update(emails[1].id, `status = 'completed'`);
      await update(emails[2].id, `status = 'running'`);
      await update(
        emails[3].id,
        `status = 'blocked', unfinished_dependencies = 1, on_dependency_failure = 'fail'`,
      );
      await update(reports[0].id, `status = 'failed'`);
      await update(reports[2].id, `status = 'waiting'`);
      await app.queue.cancel(reports[1].id);
      await app.queue.enqueue('report', {}, { delayMs: 3_600_000 });

      expect(await app.queue.stats({ maxAgeMs: 0 })).toEqual({
        email: {
          scheduled: 0,
          pending: 1,
          waiting: 0,
          blocked: 1,
          claimed: 0,
          running: 1,
          completed: 2,
          failed: 0,
          cancelled: 0,
          paused: false,
        },
        report: {
          scheduled: 1,
          pending: 0,
          waiting: 1,
          blocked: 0,
          claimed: 0,
          running: 0,
          completed: 0,
          failed: 1,
          cancelled: 1,
          paused: false,
        },
      });
    });
  });

  describe('findStale', () => {
    it('returns held jobs whose row has not changed for longer than the given time, oldest first', async () => {
      const [oldClaimed, oldRunning, freshClaimed, oldPending, oldCompleted, edge] =
        await app.queue.enqueueMany(
          ['old_claimed', 'old_running', 'fresh', 'old_pending', 'old_completed', 'edge'].map(
            (data) => ({ type: 'stale', data }),
          ),
        );
      await update(oldClaimed.id, `status = 'claimed', updated_at = now() - interval '10 minutes'`);
      await update(oldRunning.id, `status = 'running', updated_at = now() - interval '20 minutes'`);
      await update(freshClaimed.id, `status = 'claimed', updated_at = now()`);
      await update(oldPending.id, `updated_at = now() - interval '1 hour'`);
      await update(oldCompleted.id, `status = 'completed', updated_at = now() - interval '1 hour'`);
      // Held for 4 minutes: younger than the 5-minute threshold.
      await update(edge.id, `status = 'running', updated_at = now() - interval '4 minutes'`);

      const stale = await app.queue.findStale(5 * 60_000);

      expect(stale.map((job) => job.data)).toEqual(['old_running', 'old_claimed']);
      expect(stale[0]).toBeInstanceOf(Job);
      expect(stale.map((job) => job.status)).toEqual([JobStatus.Running, JobStatus.Claimed]);

      expect((await app.queue.findStale(3 * 60_000)).map((job) => job.data)).toEqual([
        'old_running',
        'old_claimed',
        'edge',
      ]);
      expect(await app.queue.findStale(60 * 60_000)).toEqual([]);
    });

    it('progress counts as a change: a reporting job is not stale', async () => {
      const job = await app.queue.enqueue('stale', {});
      await update(job.id, `status = 'running', updated_at = now() - interval '10 minutes'`);
      expect((await app.queue.findStale(60_000)).map((stale) => stale.id)).toEqual([job.id]);

      await app.queue.updateProgress(job.id, 10);
      expect(await app.queue.findStale(60_000)).toEqual([]);
    });
  });
});

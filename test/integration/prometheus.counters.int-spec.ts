import { Injectable } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Job, JobContext, JobHandler, JobStatus, SnoozeJob } from 'nest-pg-job-queue';
import { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import { CapturingLogger } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { samplesOf } from '../support/prometheus-text';

const A = 'metrics.a';
const B = 'metrics.b';
const SNOOZY = 'metrics.snoozy';
/** No handler here: its jobs stay pending until cancelled. */
const UNHANDLED = 'metrics.unhandled';

/** `a` completes; `b` always throws (2 attempts, no backoff); `snoozy` snoozes once, then completes. */
@Injectable()
class CountedHandlers {
  private readonly snoozed = new Set<string>();

  @JobHandler(A)
  a(): { ok: true } {
    return { ok: true };
  }

  @JobHandler(B, { maxAttempts: 2, backoff: { baseDelayMs: 0, jitter: 0 } })
  b(job: Job): never {
    throw new Error(`b fails (attempt ${job.attempts})`);
  }

  @JobHandler(SNOOZY)
  snoozy(job: Job, ctx: JobContext): SnoozeJob | { ok: true } {
    if (this.snoozed.has(job.id)) return { ok: true };
    this.snoozed.add(job.id);
    return ctx.snooze(0);
  }
}

/** `{ a: 5 }` as `{ 'type=metrics.a': 5 }`. */
const byType = (counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(counts).map(([type, n]) => [`type=${type}`, n]));

describe('prometheus: counters and histograms after a known run', () => {
  const file = useWorkerTestFile();
  const registry = new Registry();
  let app: WorkerApp;
  let text: string;

  beforeAll(async () => {
    app = await file.start({
      // A retry without backoff still waits as `scheduled` for the stager: stage it at once.
      queueOptions: { worker: { concurrency: 5, pollIntervalMs: 20 }, stagerIntervalMs: 20 },
      providers: [CountedHandlers],
      imports: [JobQueueMetricsModule.forRoot({ registry })],
    });
    const { queue } = app;
    // One batch of interleaved types: the enqueue count is per type, whatever the order.
    const batch = await queue.enqueueMany(
      [A, B, A, A, B, A, A].map((type) => ({ type, data: {} })),
    );
    const snoozy = await queue.enqueue(SNOOZY, {});
    const unhandled = await queue.enqueue(UNHANDLED, {}, { uniqueKey: 'only-one' });
    // A duplicate of an unfinished job is not a new job: it is not counted.
    await queue.enqueue(UNHANDLED, {}, { uniqueKey: 'only-one' });
    await queue.cancel(unhandled.id);

    const ran = [...batch, snoozy].map((job) => job.id);
    await waitFor(
      async () => {
        const jobs = await Promise.all(ran.map((id) => queue.getJob(id)));
        return jobs.every(
          (job) => job.status === JobStatus.Completed || job.status === JobStatus.Failed,
        );
      },
      { description: 'every handled job to finish' },
    );
    // A run's end reaches the instrument before its outcome is written: the counts are final.
    // A fresh stats snapshot, so the scrape holds every metric the module exports.
    await queue.stats({ maxAgeMs: 0 });
    text = await registry.metrics();
  });

  it('counts what this process enqueued (created jobs only), per type', () => {
    expect(samplesOf(text, 'job_queue_jobs_enqueued_total')).toEqual(
      byType({ [A]: 5, [B]: 2, [SNOOZY]: 1, [UNHANDLED]: 1 }),
    );
  });

  it('counts each start, and each run by how it ended, per type', () => {
    // Every type is exported from its first sighting, with a 0 for what it has not done yet.
    expect(samplesOf(text, 'job_queue_jobs_started_total')).toEqual(
      byType({ [A]: 5, [B]: 4, [SNOOZY]: 2, [UNHANDLED]: 0 }),
    );
    expect(samplesOf(text, 'job_queue_jobs_completed_total')).toEqual(
      byType({ [A]: 5, [B]: 0, [SNOOZY]: 1, [UNHANDLED]: 0 }),
    );
    expect(samplesOf(text, 'job_queue_jobs_retried_total')).toEqual(
      byType({ [A]: 0, [B]: 2, [SNOOZY]: 0, [UNHANDLED]: 0 }),
    );
    expect(samplesOf(text, 'job_queue_jobs_failed_total')).toEqual(
      byType({ [A]: 0, [B]: 2, [SNOOZY]: 0, [UNHANDLED]: 0 }),
    );
    expect(samplesOf(text, 'job_queue_jobs_snoozed_total')).toEqual(
      byType({ [A]: 0, [B]: 0, [SNOOZY]: 1, [UNHANDLED]: 0 }),
    );
  });

  it('counts the cancels this process made, and no rescue', () => {
    expect(samplesOf(text, 'job_queue_jobs_cancelled_total')).toEqual(
      byType({ [A]: 0, [B]: 0, [SNOOZY]: 0, [UNHANDLED]: 1 }),
    );
    expect(samplesOf(text, 'job_queue_jobs_rescued_total')).toEqual(
      byType({ [A]: 0, [B]: 0, [SNOOZY]: 0, [UNHANDLED]: 0 }),
    );
  });

  it('observes each run time once, by type and outcome', () => {
    expect(samplesOf(text, 'job_queue_job_run_seconds_count')).toEqual({
      [`outcome=completed,type=${A}`]: 5,
      [`outcome=retried,type=${B}`]: 2,
      [`outcome=failed,type=${B}`]: 2,
      [`outcome=snoozed,type=${SNOOZY}`]: 1,
      [`outcome=completed,type=${SNOOZY}`]: 1,
    });
    // The +Inf bucket holds every run too: nothing fell outside the histogram.
    const infBuckets = Object.entries(samplesOf(text, 'job_queue_job_run_seconds_bucket'))
      .filter(([labels]) => labels.startsWith('le=+Inf,'))
      .map(([, n]) => n);
    expect(infBuckets.reduce((sum, n) => sum + n, 0)).toBe(11);
  });

  it('observes one wait per start, never negative', () => {
    expect(samplesOf(text, 'job_queue_job_wait_seconds_count')).toEqual(
      byType({ [A]: 5, [B]: 4, [SNOOZY]: 2 }),
    );
    for (const sum of Object.values(samplesOf(text, 'job_queue_job_wait_seconds_sum'))) {
      expect(sum).toBeGreaterThanOrEqual(0);
    }
  });

  afterAll(() => app.close());

  it('labels nothing by id or key', () => {
    const labelNames = new Set([...text.matchAll(/[{,](\w+)="/g)].map(([, label]) => label));
    expect([...labelNames].sort()).toEqual(['le', 'outcome', 'state', 'status', 'type']);
  });
});

describe('prometheus: rescues by this process', () => {
  const file = useWorkerTestFile();
  const registry = new Registry();

  it("counts the reaper's rescues, and a job it fails for good as failed too", async () => {
    const app = await file.start({
      queueOptions: { reaperIntervalMs: 100, worker: { pollIntervalMs: 20 } },
      logger: new CapturingLogger(), // the reaper warns of each rescue
      imports: [JobQueueMetricsModule.forRoot({ registry })],
    });
    // Two jobs held by a worker that is gone: one on its last attempt, one with attempts left.
    const last = await app.queue.enqueue(UNHANDLED, {}, { maxAttempts: 1 });
    const more = await app.queue.enqueue(UNHANDLED, {}, { maxAttempts: 3 });
    await app.dataSource.query(
      `UPDATE job_queue.jobs
       SET status = 'running', worker_id = 'gone-worker', attempts = 1, run_token = 1,
           claimed_at = now() - interval '1 hour', started_at = now() - interval '1 hour',
           heartbeat_at = now() - interval '1 hour'
       WHERE id = ANY($1::bigint[])`,
      [[last.id, more.id]],
    );
    const rescued = await waitFor(
      async () => {
        const samples = samplesOf(await registry.metrics(), 'job_queue_jobs_rescued_total');
        return samples[`type=${UNHANDLED}`] === 2 ? samples : undefined;
      },
      { description: 'the reaper to rescue both jobs' },
    );
    expect(rescued).toEqual(byType({ [UNHANDLED]: 2 }));
    const text = await registry.metrics();
    expect(samplesOf(text, 'job_queue_jobs_failed_total')).toEqual(byType({ [UNHANDLED]: 1 }));
    expect(samplesOf(text, 'job_queue_jobs_retried_total')).toEqual(byType({ [UNHANDLED]: 0 }));
    expect((await app.queue.getJob(last.id)).status).toBe(JobStatus.Failed);
  });
});

describe('prometheus: jobs from schedules', () => {
  const file = useWorkerTestFile();
  const registry = new Registry();
  const FIRED = 'metrics.fired';
  const RUN_NOW = 'metrics.run-now';

  it('counts each job a cron fire enqueued, and the one runSchedule enqueued, per type', async () => {
    const app = await file.start({ imports: [JobQueueMetricsModule.forRoot({ registry })] });
    await app.queue.schedule('metrics-every-second', '* * * * * *', FIRED, null);
    // A yearly schedule does not fire during the test: its one job is runSchedule's.
    await app.queue.schedule('metrics-yearly', '0 0 1 1 *', RUN_NOW, null);
    const jobsOf = async (type: string): Promise<number> =>
      (await app.queue.listJobs({ type })).jobs.length;
    await waitFor(async () => (await jobsOf(FIRED)) >= 2, {
      description: 'the every-second schedule to fire twice',
    });
    await app.queue.unschedule('metrics-every-second');
    await app.queue.runSchedule('metrics-yearly');
    // A fire under way as the schedule went may still land: the count catches up with it.
    const fired = await jobsOf(FIRED);
    const counted = await waitFor(
      async () => {
        const samples = samplesOf(await registry.metrics(), 'job_queue_jobs_enqueued_total');
        return samples[`type=${FIRED}`] === fired ? samples : undefined;
      },
      { description: `the enqueue counter to reach the ${fired} fired jobs` },
    );
    expect(counted).toEqual(byType({ [FIRED]: fired, [RUN_NOW]: 1 }));
  });
});

import { Injectable } from '@nestjs/common';
import { Job, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { ScheduledJobStager } from '../../libs/job-queue/src/maintenance/scheduled-job-stager';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const STAGER_INTERVAL_MS = 100;
/** Long enough to see the job scheduled, first. */
const BACKOFF = { baseDelayMs: 600, maxDelayMs: 600, jitter: 0 };

@Injectable()
class ScheduledHandlers {
  /** `Date.now()` when each attempt started, by job id. */
  readonly attemptStarts = new Map<string, number[]>();

  @JobHandler('scheduled.run')
  run(job: Job): void {
    this.record(job);
  }

  @JobHandler('scheduled.flaky', { maxAttempts: 2, backoff: BACKOFF })
  flaky(job: Job): { attempt: number } {
    this.record(job);
    if (job.attempts === 1) throw new Error('first attempt fails');
    return { attempt: job.attempts };
  }

  private record(job: Job): void {
    const starts = this.attemptStarts.get(job.id) ?? [];
    starts.push(Date.now());
    this.attemptStarts.set(job.id, starts);
  }
}

describe('worker: scheduled jobs (delays and retry backoff)', () => {
  let worker: WorkerApp;
  let handlers: ScheduledHandlers;
  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        // A slow poll: a due job starts because the stager wakes the poller, not by a poll.
        worker: { concurrency: 5, pollIntervalMs: 60_000 },
        stagerIntervalMs: STAGER_INTERVAL_MS,
      },
      providers: [ScheduledHandlers],
    });
    handlers = worker.app.get(ScheduledHandlers);
  });

  const statusOf = async (id: string): Promise<JobStatus> => (await worker.queue.getJob(id)).status;

  it('runs a delayed job once due, not before, woken by the stager (not the 60 s poll)', async () => {
    const job = await worker.queue.enqueue('scheduled.run', {}, { delayMs: 700 });
    expect(job.status).toBe(JobStatus.Scheduled);
    const done = await waitFor(
      async () => {
        const row = await worker.queue.getJob(job.id);
        return row.status === JobStatus.Completed ? row : undefined;
      },
      // The failure bound: generous, yet well under the 60 s poll, so the stager must have woken
      // the poller.
      { timeoutMs: 30_000, description: 'the delayed job to complete' },
    );
    const [start] = handlers.attemptStarts.get(job.id)!;
    // Not before run_at (allowing for the two clocks).
    expect(start).toBeGreaterThanOrEqual(job.runAt.getTime() - 5);
    expect(done.attempts).toBe(1);
  });

  it('puts a failed attempt back as scheduled for its backoff, then runs it again', async () => {
    const job = await worker.queue.enqueue('scheduled.flaky', {});
    await waitFor(async () => (await statusOf(job.id)) === JobStatus.Scheduled, {
      description: 'the retry to wait as scheduled',
    });
    const waiting = await worker.queue.getJob(job.id);
    expect(waiting.attempts).toBe(1);
    expect(waiting.lastError).toContain('first attempt fails');
    expect((await worker.queue.stats({ maxAgeMs: 0 }))['scheduled.flaky'].scheduled).toBe(1);

    await waitFor(async () => (await statusOf(job.id)) === JobStatus.Completed, {
      description: 'the retry to complete',
    });
    const starts = handlers.attemptStarts.get(job.id)!;
    expect(starts).toHaveLength(2);
    expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(BACKOFF.baseDelayMs - 5);
  });

  it('cancels a scheduled job: the stager never makes it pending and it never runs', async () => {
    const job = await worker.queue.enqueue('scheduled.run', {}, { delayMs: 300 });
    await worker.queue.cancel(job.id);
    // A pass at a moment past its run_at stages nothing of it.
    await worker.app.get(ScheduledJobStager).stageOnce(new Date(job.runAt.getTime() + 60_000));
    expect(await statusOf(job.id)).toBe(JobStatus.Cancelled);
    expect(handlers.attemptStarts.has(job.id)).toBe(false);
  });
});

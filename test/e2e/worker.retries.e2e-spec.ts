import { Job, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  HANDLER_MAX_ATTEMPTS,
  RETRY_BACKOFF,
  RetryHandlers,
  THROWN_VALUES,
} from '../fixtures/retry.handlers';

// The database's clock sets run_at and Node's stamps attempts: allow for rounding between them.
const CLOCK_SLACK_MS = 5;

describe('worker: retries', () => {
  let worker: WorkerApp;
  let handlers: RetryHandlers;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      // Retries wait as scheduled: stage them as often as the poll runs, so the gaps are the
      // backoff's own.
      queueOptions: { worker: { concurrency: 10, pollIntervalMs: 20 }, stagerIntervalMs: 20 },
      providers: [RetryHandlers],
    });
    handlers = worker.app.get(RetryHandlers);
  });

  /** Waits until the job is completed or failed, and returns it. */
  function settled(id: string, timeoutMs = 10_000): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker.queue.getJob(id);
        return job.status === JobStatus.Completed || job.status === JobStatus.Failed
          ? job
          : undefined;
      },
      { timeoutMs, description: `job ${id} to finish` },
    );
  }

  it('completes a job that fails twice then succeeds, on attempt 3', async () => {
    const enqueued = await worker.queue.enqueue('retry.flaky', { failures: 2 });
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Completed);
    expect(job.attempts).toBe(3);
    expect(job.result).toEqual({ succeededOnAttempt: 3 });
    expect(handlers.attemptStarts.get(job.id)).toHaveLength(3);
  });

  it('fails a job that always throws after the handler maxAttempts, keeping message and stack', async () => {
    const enqueued = await worker.queue.enqueue('retry.always', {});
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Failed);
    expect(job.attempts).toBe(HANDLER_MAX_ATTEMPTS);
    expect(handlers.attemptStarts.get(job.id)).toHaveLength(HANDLER_MAX_ATTEMPTS);
    expect(job.completedAt).toBeInstanceOf(Date);
    expect(job.lastError).toContain(`always broken (job ${job.id})`);
    expect(job.lastError).toMatch(/\n\s+at .*retry\.handlers/);
  });

  it('waits longer before each retry (exponential backoff)', async () => {
    // Four attempts: retries scheduled 100, 200 and 400 ms after each failure was written.
    const enqueued = await worker.queue.enqueue('retry.always', {}, { maxAttempts: 4 });
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Failed);
    // The outcome write stamps its `retrying` row and the retry's run_at with one now(), so their
    // difference is the delay the worker chose, whatever a loaded machine adds before the start.
    const retried = (await worker.queue.jobEvents(job.id))
      .filter((entry) => entry.kind === 'retrying')
      .map((entry) => entry.at.getTime());
    const runAts = handlers.attemptRunAts.get(job.id)!;
    expect(retried).toHaveLength(3);
    expect(runAts).toHaveLength(4);
    const delays = retried.map((failedAt, i) => runAts[i + 1] - failedAt);
    expect(delays).toEqual([0, 1, 2].map((i) => RETRY_BACKOFF.baseDelayMs * 2 ** i));
    // And no retry started before its time.
    const starts = handlers.attemptStarts.get(job.id)!;
    starts.slice(1).forEach((start, i) => {
      expect(start).toBeGreaterThanOrEqual(runAts[i + 1] - CLOCK_SLACK_MS);
    });
  });

  it.each([1, 2, 5])(
    "lets a job's own maxAttempts (%i) override the handler's",
    async (maxAttempts) => {
      const enqueued = await worker.queue.enqueue('retry.always', {}, { maxAttempts });
      const job = await settled(enqueued.id);
      expect(job.status).toBe(JobStatus.Failed);
      expect(job.maxAttempts).toBe(maxAttempts);
      expect(job.attempts).toBe(maxAttempts);
      expect(handlers.attemptStarts.get(job.id)).toHaveLength(maxAttempts);
    },
  );

  it('fails at once, on attempt 1, on PermanentJobError', async () => {
    const enqueued = await worker.queue.enqueue('retry.permanent', {});
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Failed);
    expect(job.attempts).toBe(1);
    expect(handlers.attemptStarts.get(job.id)).toHaveLength(1);
    expect(job.lastError).toContain('PermanentJobError');
    expect(job.lastError).toContain('has bad data; retrying cannot help');
  });

  it.each(Object.keys(THROWN_VALUES))(
    'records a thrown %s readably in last_error',
    async (kind) => {
      const enqueued = await worker.queue.enqueue('retry.throw-value', { kind });
      const job = await settled(enqueued.id);
      expect(job.status).toBe(JobStatus.Failed);
      expect(job.attempts).toBe(1);
      expect(job.lastError).toBeTruthy();
      expect(job.lastError).not.toContain('[object Object]');
      for (const text of THROWN_VALUES[kind].shows) expect(job.lastError).toContain(text);
    },
  );
});

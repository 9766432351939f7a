import { Job, JobStatus, JobTimeoutError } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { HANDLER_TIMEOUT_MS, TimeoutHandlers } from '../fixtures/timeout.handlers';

describe('worker: handler timeouts', () => {
  let worker: WorkerApp;
  let handlers: TimeoutHandlers;

  // Lets the handler that ignored its signal return, so nothing of it outlives the file.
  const file = useWorkerTestFile({ beforeClose: () => handlers?.ignoredGate.open() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 5, pollIntervalMs: 20 } },
      providers: [TimeoutHandlers],
    });
    handlers = worker.app.get(TimeoutHandlers);
  });

  function settled(id: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker.queue.getJob(id);
        return job.status === JobStatus.Completed || job.status === JobStatus.Failed
          ? job
          : undefined;
      },
      { description: `job ${id} to finish` },
    );
  }

  it('aborts ctx.signal with JobTimeoutError and retries until an attempt is fast enough', async () => {
    const enqueued = await worker.queue.enqueue('timeout.slow-then-fast', {});
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Completed);
    expect(job.attempts).toBe(3);
    expect(job.result).toEqual({ attempt: 3 });
    const reasons = handlers.abortReasons.get(job.id)!;
    expect(reasons).toHaveLength(2);
    for (const reason of reasons) {
      expect(reason).toBeInstanceOf(JobTimeoutError);
      expect((reason as JobTimeoutError).timeoutMs).toBe(HANDLER_TIMEOUT_MS);
    }
    // The timed-out attempts left their trace.
    expect(job.lastError).toContain(`timed out after ${HANDLER_TIMEOUT_MS} ms`);
  });

  it('fails a job that times out on every attempt once out of attempts', async () => {
    const enqueued = await worker.queue.enqueue('timeout.always-hangs', {});
    const job = await settled(enqueued.id);
    expect(job.status).toBe(JobStatus.Failed);
    expect(job.attempts).toBe(2);
    expect(handlers.abortReasons.get(job.id)).toHaveLength(2);
    expect(job.lastError).toContain('JobTimeoutError');
    expect(job.lastError).toContain(`timed out after ${HANDLER_TIMEOUT_MS} ms`);
  });

  it('frees the slot of a handler that ignores its signal', async () => {
    // concurrency 1 for this type: the second job can start only once the first's slot is free,
    // and the first handler never returns until the gate opens at the end.
    const [first, second] = await worker.queue.enqueueMany([
      { type: 'timeout.ignores-signal', data: { n: 1 } },
      { type: 'timeout.ignores-signal', data: { n: 2 } },
    ]);
    const jobs = [await settled(first.id), await settled(second.id)];
    expect(handlers.ignoringStarted).toEqual([first.id, second.id]);
    expect(handlers.ignoringReturned).toEqual([]);
    for (const job of jobs) {
      expect(job.status).toBe(JobStatus.Failed);
      expect(job.attempts).toBe(1);
      expect(job.lastError).toContain(`timed out after ${HANDLER_TIMEOUT_MS} ms`);
    }

    // When the stuck handlers finally return, their results are not recorded.
    handlers.ignoredGate.open();
    await waitFor(() => handlers.ignoringReturned.length === 2, {
      description: 'the stuck handlers to return',
    });
    const witness = await worker.queue.enqueue('timeout.slow-then-fast', {}, { maxAttempts: 1 });
    await settled(witness.id);
    for (const id of [first.id, second.id]) {
      const job = await worker.queue.getJob(id);
      expect(job.status).toBe(JobStatus.Failed);
      expect(job.result).toBeNull();
    }
  });
});

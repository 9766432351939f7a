import { Job, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { ProgressHandlers } from '../fixtures/progress.handlers';

const THROTTLE_MS = 200;

describe('worker: ctx.progress', () => {
  let worker: WorkerApp;
  let handlers: ProgressHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.gate.open() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { progressThrottleMs: THROTTLE_MS, worker: { pollIntervalMs: 20 } },
      providers: [ProgressHandlers],
    });
    handlers = worker.app.get(ProgressHandlers);
  });

  function completed(id: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker.queue.getJob(id);
        return job.status === JobStatus.Completed ? job : undefined;
      },
      { description: `job ${id} to complete` },
    );
  }

  /** The kinds of the job's log rows, and its `eventsCount`, which must count them. */
  async function logKinds(job: Job): Promise<string[]> {
    const rows = await worker.queue.jobEvents(job.id, { limit: 1000 });
    expect(job.eventsCount).toBe(rows.length);
    return rows.map((row) => row.kind);
  }

  /** Progress rows: one per write, the throttled ones and the one that rode on the completion. */
  const progressRows = (kinds: string[]) => kinds.filter((kind) => kind === 'progress').length;

  it('writes a burst of 100 calls at most twice, and the last value lands', async () => {
    const enqueued = await worker.queue.enqueue('progress.burst', {});
    const job = await completed(enqueued.id);
    expect(job.progress).toBe(100);
    expect(job.currentStage).toBe('step 100');
    // The first call writes; the rest wait for the throttle and, the burst being over well
    // within a period, ride on the completion write.
    const took = handlers.durations.get(job.id)!;
    const kinds = await logKinds(job);
    expect(kinds[0]).toBe('claimed');
    expect(kinds.at(-1)).toBe('completed');
    expect(progressRows(kinds)).toBeGreaterThanOrEqual(1);
    expect(progressRows(kinds)).toBeLessThanOrEqual(Math.ceil(took / THROTTLE_MS) + 2);
    expect(progressRows(kinds)).toBeLessThan(100 / 5);
  });

  it('writes calls spread over time about once per throttle period, and the last value lands', async () => {
    const enqueued = await worker.queue.enqueue('progress.spread', {});
    const job = await completed(enqueued.id);
    expect(job.progress).toBe(100);
    expect(job.currentStage).toBe('step 100');
    const took = handlers.durations.get(job.id)!;
    // At most one write per period, plus the first one and the completion's; the calls span
    // several periods, so the throttle did write along the way, not only at the end.
    const kinds = await logKinds(job);
    expect(progressRows(kinds)).toBeLessThanOrEqual(Math.ceil(took / THROTTLE_MS) + 2);
    expect(progressRows(kinds)).toBeGreaterThanOrEqual(2);
    expect(progressRows(kinds)).toBeLessThan(100 / 5);
  });

  it('keeps progress and log working when a handler takes them off ctx', async () => {
    const enqueued = await worker.queue.enqueue('progress.destructured', {});
    const job = await completed(enqueued.id);
    expect(job).toMatchObject({ progress: 64, currentStage: 'taken off ctx' });
    const rows = await worker.queue.jobEvents(job.id, { limit: 1000 });
    expect(rows.filter((row) => row.kind === 'log').map((row) => row.message)).toEqual([
      'destructured',
    ]);
  });

  it('shows progress while the job still runs', async () => {
    const enqueued = await worker.queue.enqueue('progress.then-wait', {});
    const running = await waitFor(
      async () => {
        const job = await worker.queue.getJob(enqueued.id);
        return job.progress === 37 ? job : undefined;
      },
      { description: 'progress 37 to be recorded' },
    );
    expect(running.status).toBe(JobStatus.Running);
    expect(running.currentStage).toBe('halfway-ish');
    expect(await logKinds(running)).toEqual(['claimed', 'progress']);
    handlers.gate.open();
    const job = await completed(enqueued.id);
    expect(job.progress).toBe(37);
    expect(await logKinds(job)).toEqual(['claimed', 'progress', 'completed']);
  });
});

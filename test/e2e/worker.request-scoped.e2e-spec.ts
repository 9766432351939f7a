import { JobStatus } from 'nest-pg-job-queue';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { RunAudit, ScopedHandlers, ScopedRuns } from '../fixtures/request-scoped.handlers';

/**
 * Handlers on request-scoped providers: each run resolves the provider and its request-scoped
 * dependencies in a DI sub-tree of its own, with the run's job behind `JOB_REF` (`@InjectJob()`).
 */
describe('worker: request-scoped handlers', () => {
  let worker: WorkerApp;
  let runs: ScopedRuns;
  const file = useWorkerTestFile({ beforeClose: () => runs?.gate.open() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 20 }, stagerIntervalMs: 20 },
      providers: [ScopedRuns, RunAudit, ScopedHandlers],
    });
    runs = worker.app.get(ScopedRuns);
  });

  it('resolves the handler once per run: two concurrent runs, two instances, each with its own job', async () => {
    const first = await worker.queue.enqueue('scoped.run', { label: 'first' });
    const second = await worker.queue.enqueue('scoped.run', { label: 'second' });
    // Both runs are in their handlers at once before either may finish.
    await waitFor(() => runs.started.has(first.id) && runs.started.has(second.id), {
      description: 'both runs to start',
    });
    expect(runs.instances).toBe(4); // a handler and a RunAudit per run
    runs.gate.open();

    const results = await Promise.all(
      [first, second].map((job) => waitForJobToFinish(worker.queue, job.id)),
    );
    expect(results.map((job) => job.status)).toEqual([JobStatus.Completed, JobStatus.Completed]);
    const [a, b] = results.map(
      (job) => job.result as { handlerInstance: number; auditInstance: number; label: string },
    );
    expect(a).toMatchObject({ injectedIsRunJob: true, label: 'first' });
    expect(b).toMatchObject({ injectedIsRunJob: true, label: 'second' });
    expect(
      new Set([a.handlerInstance, a.auditInstance, b.handlerInstance, b.auditInstance]).size,
    ).toBe(4);

    // A later run gets fresh instances again.
    const third = await worker.queue.enqueue('scoped.run', { label: 'third' });
    const done = await waitForJobToFinish(worker.queue, third.id);
    expect(done.result).toMatchObject({ injectedIsRunJob: true, label: 'third' });
    expect(runs.instances).toBe(6);
  });
});

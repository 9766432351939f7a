import { Job, JobCancelledError, JobStatus } from 'nest-pg-job-queue';
import { RunningJobs } from '../../libs/job-queue/src/worker/running-jobs';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { FENCED_JOB, FencedRun, FencingHandlers } from '../fixtures/fencing.handlers';

// No heartbeat during a test: whatever aborts the old run or fences its writes, it is not that.
const QUIET_HEARTBEAT = { heartbeatIntervalMs: 60_000, staleAfterMs: 180_000 };
/** Far below the heartbeat interval; generous for a loaded machine. */
const ABORT_DEADLINE_MS = 5_000;

/**
 * A job cancelled while it runs and retried at once is claimed again by the same worker while
 * its old run is still going. Only the new run may speak for the job: the old one is aborted
 * (LISTEN on), nothing it writes lands (progress, result), and each run counts against the
 * worker's concurrency until it settles, the old one's end taking nothing from the new one.
 */
describe('worker: cancel then retry while the job runs', () => {
  let worker: WorkerApp | undefined;
  let handlers: FencingHandlers | undefined;

  const file = useWorkerTestFile({
    beforeClose: () => handlers?.runs.forEach((run) => run.gate.open()),
  });

  afterEach(async () => {
    handlers?.runs.forEach((run) => run.gate.open());
    await worker?.close();
    worker = undefined;
    handlers = undefined;
  });

  async function startWorker(listen: boolean): Promise<{ running: RunningJobs }> {
    worker = await startWorkerApp({
      url: file.url,
      queueOptions: {
        ...QUIET_HEARTBEAT,
        progressThrottleMs: 0,
        worker: { concurrency: 3, pollIntervalMs: 20, listen },
      },
      providers: [FencingHandlers],
    });
    handlers = worker.app.get(FencingHandlers);
    return { running: worker.app.get(RunningJobs) };
  }

  function run(jobId: string, index: number): Promise<FencedRun> {
    return waitFor(() => handlers!.runsOf(jobId)[index], {
      description: `run ${index + 1} of job ${jobId} to start`,
    });
  }

  function jobWhen(id: string, ready: (job: Job) => boolean, description: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker!.queue.getJob(id);
        return ready(job) ? job : undefined;
      },
      { description },
    );
  }

  /** Cancels the running job and retries it; returns its first and second runs. */
  async function cancelAndRetryWhileRunning(jobId: string): Promise<[FencedRun, FencedRun]> {
    const first = await run(jobId, 0);
    await jobWhen(jobId, (job) => job.currentStage === 'run 1', 'run 1 to report progress');
    expect((await worker!.queue.cancel(jobId)).status).toBe(JobStatus.Cancelled);
    expect((await worker!.queue.retry(jobId)).status).toBe(JobStatus.Pending);
    const second = await run(jobId, 1);
    await jobWhen(jobId, (job) => job.currentStage === 'run 2', 'run 2 to report progress');
    return [first, second];
  }

  it('LISTEN on: aborts the old run at once; the job completes with the new run’s result only', async () => {
    const { running } = await startWorker(true);
    const job = await worker!.queue.enqueue(FENCED_JOB, {});
    const [first, second] = await cancelAndRetryWhileRunning(job.id);

    const aborted = await waitFor(() => first.abortedWith, {
      timeoutMs: ABORT_DEADLINE_MS,
      description: 'the old run to see its signal abort',
    });
    expect(aborted.reason).toBeInstanceOf(JobCancelledError);
    await waitFor(() => first.returned, { description: 'the old run to return' });

    // The old run has settled; the new one still counts, and is the only one.
    await waitFor(() => running.size === 1, { description: 'one run held' });
    expect(running.countOf(FENCED_JOB)).toBe(1);
    // Its late progress ("run 1", 90) did not land.
    expect(await worker!.queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Running,
      currentStage: 'run 2',
      progress: 10,
    });

    second.gate.open();
    const done = await jobWhen(job.id, (j) => j.status === JobStatus.Completed, 'completion');
    expect(done).toMatchObject({
      result: { run: 2 },
      currentStage: 'run 2',
      progress: 90,
      attempts: 1,
    });
    expect(second.abortedWith).toBeUndefined();
    expect(running.size).toBe(0);
  });

  it('LISTEN off, no heartbeat yet: the old run goes on, both runs count, nothing it writes lands', async () => {
    const { running } = await startWorker(false);
    const job = await worker!.queue.enqueue(FENCED_JOB, {});
    const [first, second] = await cancelAndRetryWhileRunning(job.id);

    // Two runs of one job in this process: each takes a slot.
    expect(running.size).toBe(2);
    expect(running.countOf(FENCED_JOB)).toBe(2);

    // The old run finishes its work: a progress write and a result, both of a superseded run.
    first.gate.open();
    await waitFor(() => first.returned, { description: 'the old run to return' });
    // Its progress write changed nothing, was counted, and aborted it.
    expect(running.superseded.byKind).toEqual({ progress: 1, heartbeat: 0, outcome: 0 });
    expect(first.abortedWith?.reason).toBeInstanceOf(JobCancelledError);
    await waitFor(() => running.size === 1, { description: 'the old run to settle' });
    expect(running.countOf(FENCED_JOB)).toBe(1);

    // A witness run to the end: every outcome queued before its own is written by then.
    const witness = await worker!.queue.enqueue(FENCED_JOB, {});
    (await run(witness.id, 0)).gate.open();
    await jobWhen(witness.id, (j) => j.status === JobStatus.Completed, 'the witness to complete');

    expect(await worker!.queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Running,
      currentStage: 'run 2',
      progress: 10,
      result: null,
    });
    // The new run still counts (its slot, its lease) after the old one left.
    expect(running.size).toBe(1);

    second.gate.open();
    const done = await jobWhen(job.id, (j) => j.status === JobStatus.Completed, 'completion');
    expect(done).toMatchObject({ result: { run: 2 }, currentStage: 'run 2', progress: 90 });
  });
});

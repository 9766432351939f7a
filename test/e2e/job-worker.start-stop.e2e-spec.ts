import { SchedulerRegistry } from '@nestjs/schedule';
import {
  InvalidJobQueueOptionsError,
  JobStatus,
  JobWorker,
  WorkerShutdownError,
} from 'nest-pg-job-queue';
import { JOB_QUEUE_SCHEDULER } from '../../libs/job-queue/src/job-queue.constants';
import { waitFor } from '../support/wait-for';
import {
  bootFailure,
  startWorkerApp,
  useWorkerTestFile,
  WorkerApp,
} from '../support/worker-test-app';
import { RECORD_JOB, RecordingHandlers, WITNESS_JOB } from '../fixtures/recording.handlers';
import { ShutdownHandlers } from '../fixtures/shutdown.handlers';

/** The worker's intervals in its app's registry (none while it is stopped). */
function intervals(app: WorkerApp): string[] {
  return app.app.get<SchedulerRegistry>(JOB_QUEUE_SCHEDULER).getIntervals().sort();
}

describe('JobWorker: worker.autoStart false, start() and stop()', () => {
  let witness: WorkerApp;
  const gates: ShutdownHandlers[] = [];

  const file = useWorkerTestFile({
    // A test that failed midway must not leave a handler waiting on its gate.
    beforeClose: () => gates.forEach((handlers) => handlers.gate.open()),
  });

  beforeAll(async () => {
    // A worker for another type: its jobs completing show that polls and notifications have come
    // and gone, i.e. a worker that could claim a job would have claimed it by then.
    witness = await file.start({
      queueOptions: { worker: { pollIntervalMs: 20, jobTypes: [WITNESS_JOB] } },
      providers: [RecordingHandlers],
    });
  });

  async function witnessRounds(rounds: number): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      const seen = await witness.queue.enqueue(WITNESS_JOB, { i });
      await waitFor(
        async () => (await witness.queue.getJob(seen.id)).status === JobStatus.Completed,
        { description: `witness job ${seen.id} to complete` },
      );
    }
  }

  async function waitForStatus(app: WorkerApp, id: string, status: JobStatus): Promise<void> {
    await waitFor(async () => (await app.queue.getJob(id)).status === status, {
      description: `job ${id} to be ${status}`,
    });
  }

  /** A worker app of `ShutdownHandlers` (handlers wait on its gate) for `jobType` only. */
  async function gatedWorker(jobType: string, shutdownTimeoutMs: number) {
    const app = await file.start({
      queueOptions: { shutdownTimeoutMs, worker: { pollIntervalMs: 20, jobTypes: [jobType] } },
      providers: [ShutdownHandlers],
    });
    const handlers = app.app.get(ShutdownHandlers);
    gates.push(handlers);
    return { app, worker: app.app.get(JobWorker), handlers };
  }

  it('with autoStart false, claims nothing until start(), then runs the waiting job', async () => {
    const app = await file.start({
      queueOptions: { worker: { autoStart: false, pollIntervalMs: 20, jobTypes: [RECORD_JOB] } },
      providers: [RecordingHandlers],
    });
    const worker = app.app.get(JobWorker);
    expect(worker.isRunning).toBe(false);
    expect(intervals(app)).toEqual([]);

    const job = await app.queue.enqueue(RECORD_JOB, {});
    await witnessRounds(5);
    expect(await app.queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Pending,
      attempts: 0,
      workerId: null,
    });
    expect(app.app.get(RecordingHandlers).ran).toEqual([]);

    await worker.start();
    expect(worker.isRunning).toBe(true);
    await waitForStatus(app, job.id, JobStatus.Completed);
    expect(app.app.get(RecordingHandlers).ran).toEqual([{ type: RECORD_JOB, id: job.id }]);
    expect(intervals(app)).toEqual(
      [
        `job-queue:cron:${app.workerId}`,
        `job-queue:heartbeat:${app.workerId}`,
        `job-queue:poll:${app.workerId}`,
        `job-queue:pruner:${app.workerId}`,
        `job-queue:reaper:${app.workerId}`,
        `job-queue:stager:${app.workerId}`,
        `job-queue:stats:${app.workerId}`,
      ].sort(),
    );
    await app.close(); // the tests below have their own worker for this type
  });

  it('stop() drains a running job and claims no new one; start() runs it', async () => {
    const { app, worker, handlers } = await gatedWorker('shutdown.drain', 30_000);
    const running = await app.queue.enqueue('shutdown.drain', {});
    await waitFor(() => handlers.started.includes(running.id), {
      description: 'the handler to start',
    });

    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    // Claiming has stopped (the poll interval is gone) while the handler is still running.
    await waitFor(() => !intervals(app).includes(`job-queue:poll:${app.workerId}`), {
      description: 'the poller to stop',
    });
    expect(worker.isRunning).toBe(false);
    const waiting = await app.queue.enqueue('shutdown.drain', {});
    expect(stopped).toBe(false);
    handlers.gate.open();
    await stopping;

    expect(handlers.abortReasons).toEqual([]);
    expect(await app.queue.getJob(running.id)).toMatchObject({
      status: JobStatus.Completed,
      result: { finished: running.id },
    });
    expect(intervals(app)).toEqual([]);
    await witnessRounds(3);
    expect(await app.queue.getJob(waiting.id)).toMatchObject({
      status: JobStatus.Pending,
      attempts: 0,
    });

    await worker.start();
    await waitForStatus(app, waiting.id, JobStatus.Completed);
    expect(handlers.finished).toEqual([running.id, waiting.id]);
  });

  it('stop() aborts a handler still running after shutdownTimeoutMs and hands its job back', async () => {
    const { app, worker, handlers } = await gatedWorker('shutdown.abort', 300);
    const job = await app.queue.enqueue('shutdown.abort', {});
    await waitFor(() => handlers.started.includes(job.id), { description: 'the handler to start' });

    await worker.stop(); // the gate stays shut

    expect(handlers.abortReasons).toEqual([expect.any(WorkerShutdownError)]);
    expect(await app.queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Pending,
      attempts: 0,
      workerId: null,
    });
  });

  it('start() and stop() do nothing in the state they lead to; shutdown stops a started worker', async () => {
    const app = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: { autoStart: false, pollIntervalMs: 20, jobTypes: [RECORD_JOB] } },
      providers: [RecordingHandlers],
    });
    const worker = app.app.get(JobWorker);
    await worker.stop();
    expect(worker.isRunning).toBe(false);

    await Promise.all([worker.start(), worker.start()]);
    expect(worker.isRunning).toBe(true);
    expect(intervals(app)).toHaveLength(7);
    await Promise.all([worker.stop(), worker.stop()]);
    expect(intervals(app)).toEqual([]);

    // A stop() called during a start() stops the worker that start() made.
    await Promise.all([worker.start(), worker.stop()]);
    expect(worker.isRunning).toBe(false);
    expect(intervals(app)).toEqual([]);

    await worker.start();
    const job = await app.queue.enqueue(RECORD_JOB, {});
    await waitForStatus(app, job.id, JobStatus.Completed);
    await app.close();
    expect(worker.isRunning).toBe(false);
    expect(intervals(app)).toEqual([]);
  });

  it('with worker: false, start() rejects and says why; stop() does nothing', async () => {
    const app = await file.start({ queueOptions: { worker: false } });
    const worker = app.app.get(JobWorker);
    const error: unknown = await worker.start().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect(error).toMatchObject({ option: 'worker', value: false });
    expect((error as Error).message).toMatch(/enqueue-only/);
    expect(worker.isRunning).toBe(false);
    await expect(worker.stop()).resolves.toBeUndefined();
    expect(intervals(app)).toEqual([]);
  });

  it('with autoStart false, still refuses worker.jobTypes without a handler at boot', async () => {
    const error = await bootFailure({
      url: file.url,
      queueOptions: { worker: { autoStart: false, jobTypes: [RECORD_JOB, 'start-stop.missing'] } },
      providers: [RecordingHandlers],
    });
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect(error).toMatchObject({ option: 'worker.jobTypes', value: ['start-stop.missing'] });
  });
});

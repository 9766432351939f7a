import { DataSource } from 'typeorm';
import { Job, JobStatus } from 'nest-pg-job-queue';
import { RunningJobs } from '../../libs/job-queue/src/worker/running-jobs';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  HELD_JOB,
  HeldRun,
  SCRIPTED_JOB,
  ScriptedData,
  SnoozeHandlers,
} from '../fixtures/snooze.handlers';

// The database's clock sets run_at and Node's stamps runs: allow for rounding between them.
const CLOCK_SLACK_MS = 5;

/**
 * A handler snoozes its job by throwing `SnoozeJob` or returning `ctx.snooze()`: the job waits
 * (scheduled, or pending at once for 0), its attempt given back, and runs again. The worker does
 * not LISTEN and does not heartbeat during a test: a cancelled run goes on unaware, so what keeps
 * its snooze from landing is the outcome write's fence, nothing else.
 */
describe('worker: snooze', () => {
  let worker: WorkerApp;
  let handlers: SnoozeHandlers;
  let running: RunningJobs;

  const file = useWorkerTestFile({
    beforeClose: () => handlers?.held.forEach((run) => run.gate.open()),
  });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        heartbeatIntervalMs: 60_000,
        staleAfterMs: 180_000,
        // Snoozed jobs wait as scheduled: stage them as often as the poll runs.
        stagerIntervalMs: 20,
        worker: { concurrency: 5, pollIntervalMs: 20, listen: false },
      },
      providers: [SnoozeHandlers],
    });
    handlers = worker.app.get(SnoozeHandlers);
    running = worker.app.get(RunningJobs);
  });

  const dataSource = (): DataSource => worker.dataSource;

  async function databaseNow(): Promise<number> {
    const [{ now }] = await dataSource().query(`SELECT now()::timestamptz AS now`);
    return (now as Date).getTime();
  }

  function enqueueScripted(data: ScriptedData, maxAttempts?: number): Promise<Job<ScriptedData>> {
    return worker.queue.enqueue(SCRIPTED_JOB, data, maxAttempts ? { maxAttempts } : {});
  }

  function jobWhen(id: string, ready: (job: Job) => boolean, description: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker.queue.getJob(id);
        return ready(job) ? job : undefined;
      },
      { description },
    );
  }

  it('throw new SnoozeJob(ms): the job is scheduled ms later, its attempt given back, nothing else written', async () => {
    const before = await databaseNow();
    const enqueued = await enqueueScripted({ steps: ['throw-snooze'], snoozeMs: 60_000 });
    const job = await jobWhen(
      enqueued.id,
      (j) => j.status === JobStatus.Scheduled && handlers.runsOf(j.id).length === 1,
      'the snoozed job to be scheduled',
    );
    const after = await databaseNow();

    expect(handlers.runsOf(job.id).map((run) => run.attempts)).toEqual([1]);
    expect(job).toMatchObject({
      status: JobStatus.Scheduled,
      attempts: 0,
      workerId: null,
      heartbeatAt: null,
      completedAt: null,
      lastError: null,
      result: null,
    });
    expect(job.runAt.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(job.runAt.getTime()).toBeLessThanOrEqual(after + 60_000);
    // The run's fencing token stays counted: the next claim gives a new one.
    expect(job.runToken).toBe(1);
    await worker.queue.cancel(job.id);
  });

  it('return ctx.snooze(ms): the job runs again after ms and completes, on its first attempt', async () => {
    const snoozeMs = 300;
    const enqueued = await enqueueScripted({ steps: ['return-snooze'], snoozeMs });
    const job = await waitForJobToFinish(worker.queue, enqueued.id);

    expect(job).toMatchObject({
      status: JobStatus.Completed,
      attempts: 1,
      result: { runs: 2 },
      lastError: null,
    });
    const runs = handlers.runsOf(job.id);
    expect(runs.map((run) => run.attempts)).toEqual([1, 1]);
    expect(runs[1].startedAt - runs[0].endedAt!).toBeGreaterThanOrEqual(snoozeMs - CLOCK_SLACK_MS);
  });

  it('spends no attempt: with maxAttempts 2, three snoozes and a failure still leave one attempt to complete', async () => {
    // Snoozes of 0 ms: the job is pending again at once.
    const enqueued = await enqueueScripted({
      steps: ['throw-snooze', 'return-snooze', 'throw-snooze', 'fail', 'complete'],
      snoozeMs: 0,
    });
    const job = await waitForJobToFinish(worker.queue, enqueued.id);

    expect(handlers.runsOf(job.id).map((run) => run.attempts)).toEqual([1, 1, 1, 1, 2]);
    expect(job).toMatchObject({ status: JobStatus.Completed, attempts: 2, result: { runs: 5 } });
    expect(job.lastError).toContain(`scripted failure of job ${job.id}`);
  });

  it('gives back only the attempt of the run that snoozed: after a failure, attempts stay 1', async () => {
    const enqueued = await enqueueScripted(
      { steps: ['fail', 'throw-snooze'], snoozeMs: 60_000 },
      3,
    );
    const job = await jobWhen(
      enqueued.id,
      (j) => j.status === JobStatus.Scheduled && handlers.runsOf(j.id).length === 2,
      'the job to be snoozed after its failed attempt',
    );
    expect(handlers.runsOf(job.id).map((run) => run.attempts)).toEqual([1, 2]);
    expect(job.attempts).toBe(1);
    // The failed attempt's error stays: a snooze writes none.
    expect(job.lastError).toContain(`scripted failure of job ${job.id}`);
    await worker.queue.cancel(job.id);
  });

  it.each([
    ['throw-snooze', -1],
    ['throw-snooze', 1.5],
    ['throw-snooze', 2 ** 31],
    ['return-snooze', null],
    ['return-snooze', '100'],
  ] as const)(
    '%s with a bad delay (%p) fails the attempt with InvalidJobInputError naming snoozeMs',
    async (step, snoozeMs) => {
      const enqueued = await enqueueScripted({ steps: [step], snoozeMs }, 1);
      const job = await waitForJobToFinish(worker.queue, enqueued.id);
      expect(job.status).toBe(JobStatus.Failed);
      expect(job.attempts).toBe(1);
      expect(job.lastError).toContain('InvalidJobInputError');
      expect(job.lastError).toContain('Invalid job snoozeMs');
    },
  );

  describe('a superseded run snoozes', () => {
    function heldRun(jobId: string, index: number): Promise<HeldRun> {
      return waitFor(() => handlers.heldRunsOf(jobId)[index], {
        description: `run ${index + 1} of job ${jobId} to start`,
      });
    }

    it('after a cancel: nothing lands, the job stays cancelled as it was', async () => {
      const enqueued = await worker.queue.enqueue(HELD_JOB, {});
      const run = await heldRun(enqueued.id, 0);
      const cancelled = await worker.queue.cancel(enqueued.id);
      const fencedBefore = running.superseded.byKind.outcome;

      run.gate.open();
      await waitFor(() => running.superseded.byKind.outcome === fencedBefore + 1, {
        description: 'the old run’s snooze to be written and change nothing',
      });

      const job = await worker.queue.getJob(enqueued.id);
      expect(job).toMatchObject({
        status: JobStatus.Cancelled,
        attempts: 1,
        runAt: cancelled.runAt,
        completedAt: cancelled.completedAt,
        updatedAt: cancelled.updatedAt,
      });
    });

    it('after a cancel and a retry claimed again: the old run’s snooze leaves the new run alone', async () => {
      const enqueued = await worker.queue.enqueue(HELD_JOB, {});
      const first = await heldRun(enqueued.id, 0);
      await worker.queue.cancel(enqueued.id);
      await worker.queue.retry(enqueued.id);
      const second = await heldRun(enqueued.id, 1);
      const fencedBefore = running.superseded.byKind.outcome;

      first.gate.open();
      await waitFor(() => running.superseded.byKind.outcome === fencedBefore + 1, {
        description: 'the old run’s snooze to be written and change nothing',
      });
      expect(await worker.queue.getJob(enqueued.id)).toMatchObject({
        status: JobStatus.Running,
        workerId: worker.workerId,
        attempts: 1,
        runToken: 2,
      });

      // The current run's snooze lands.
      second.gate.open();
      const job = await jobWhen(
        enqueued.id,
        (j) => j.status === JobStatus.Scheduled,
        'the current run’s snooze to land',
      );
      expect(job).toMatchObject({ attempts: 0, workerId: null, runToken: 2 });
      expect(running.superseded.byKind.outcome).toBe(fencedBefore + 1);
      await worker.queue.cancel(job.id);
    });
  });
});

import {
  InvalidJobInputError,
  JobNotFoundError,
  JobQueueUnavailableError,
  JobStatus,
  JobWaitTimeoutError,
} from 'nest-pg-job-queue';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { EventsHandlers } from '../fixtures/events.handlers';
import { JobWaits } from '../../libs/job-queue/src/events/job-waits';

/**
 * `waitForJob` in an enqueue-only process (`worker: false`): the jobs run in a worker app, and
 * the waits hear of them through LISTEN/NOTIFY, or by polling with `events.remote: false`.
 */
describe('QueueService.waitForJob', () => {
  const file = useWorkerTestFile();
  let worker: WorkerApp;
  let producer: WorkerApp;
  let pollOnly: WorkerApp;

  const listenConnections = async (workerId: string): Promise<number> => {
    const [{ n }] = await worker.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`,
      [`nest-pg-job-queue job-events ${workerId}`],
    );
    return n;
  };

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { pollIntervalMs: 100 }, events: { remote: true } },
      providers: [EventsHandlers],
    });
    producer = await file.start({ queueOptions: { worker: false, events: { remote: true } } });
    pollOnly = await file.start({
      queueOptions: { worker: false, events: { remote: false, waitPollIntervalMs: 50 } },
    });
  });

  it('resolves with the completed job', async () => {
    const job = await producer.queue.enqueue('events.ok', {});
    const done = await producer.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ id: job.id, status: JobStatus.Completed, result: { ok: true } });
  });

  it('resolves with the failed job', async () => {
    const job = await producer.queue.enqueue('events.bad', {});
    const done = await producer.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ id: job.id, status: JobStatus.Failed });
    expect(done.lastError).toContain('bad job');
  });

  it('resolves with the job cancelled while it runs', async () => {
    const job = await producer.queue.enqueue('events.until-cancelled', {});
    const waiting = producer.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    await waitFor(async () => (await producer.queue.getJob(job.id)).status === JobStatus.Running);
    await worker.queue.cancel(job.id);
    expect(await waiting).toMatchObject({ id: job.id, status: JobStatus.Cancelled });
  });

  it('resolves at once for a job that is finished already', async () => {
    const job = await producer.queue.enqueue('events.ok', {});
    await producer.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    const again = await producer.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    expect(again.status).toBe(JobStatus.Completed);
  });

  it('rejects JobWaitTimeoutError at the timeout, naming the job and the time', async () => {
    const job = await producer.queue.enqueue('events.nobody-handles-this', {});
    const error = await producer.queue.waitForJob(job.id, { timeoutMs: 300 }).catch((e) => e);
    expect(error).toBeInstanceOf(JobWaitTimeoutError);
    expect(error).toMatchObject({ jobId: job.id, timeoutMs: 300 });
    expect(error.message).toContain(`Job ${job.id}`);
    expect(error.message).toContain('300 ms');
  });

  it("rejects with the signal's reason when aborted", async () => {
    const job = await producer.queue.enqueue('events.nobody-handles-this', {});
    const controller = new AbortController();
    const waiting = producer.queue.waitForJob(job.id, {
      timeoutMs: 20_000,
      signal: controller.signal,
    });
    const reason = new Error('no longer wanted');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    const aborted = new AbortController();
    aborted.abort(reason);
    await expect(
      producer.queue.waitForJob(job.id, { timeoutMs: 20_000, signal: aborted.signal }),
    ).rejects.toBe(reason);
  });

  it('rejects JobNotFoundError for an unknown id, and for a job pruned while waited on', async () => {
    await expect(producer.queue.waitForJob('987654321', { timeoutMs: 20_000 })).rejects.toThrow(
      JobNotFoundError,
    );
    const job = await pollOnly.queue.enqueue('events.nobody-handles-this', {});
    const waiting = pollOnly.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    // Finished and pruned between two polls, behind the queue's back (no event): one
    // transaction, so no poll sees it finished; the next one finds it gone.
    await pollOnly.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE job_queue.jobs SET status = 'completed', completed_at = now() WHERE id = $1`,
        [job.id],
      );
      await manager.query(`DELETE FROM job_queue.jobs WHERE id = $1 AND status = 'completed'`, [
        job.id,
      ]);
    });
    await expect(waiting).rejects.toThrow(JobNotFoundError);
  });

  it('works with LISTEN off, by polling', async () => {
    const job = await pollOnly.queue.enqueue('events.ok', {});
    expect(await listenConnections(pollOnly.workerId)).toBe(0);
    const done = await pollOnly.queue.waitForJob(job.id, { timeoutMs: 20_000 });
    expect(done.status).toBe(JobStatus.Completed);
    expect(await listenConnections(pollOnly.workerId)).toBe(0);
  });

  it('1,000 concurrent waits share one LISTEN connection, and leave nothing behind', async () => {
    await producer.queue.pause('events.ok');
    const jobs = await producer.queue.enqueueMany(
      Array.from({ length: 1_000 }, (_, n) => ({ type: 'events.ok', data: { n } })),
    );
    const waits = producer.app.get(JobWaits);
    const waiting = Promise.all(
      jobs.map((job) => producer.queue.waitForJob(job.id, { timeoutMs: 60_000 })),
    );
    expect(waits.size).toBe(1_000);
    await waitFor(async () => (await listenConnections(producer.workerId)) === 1, {
      description: 'the LISTEN connection of the waits',
    });
    await producer.queue.resume('events.ok');
    const done = await waiting;
    expect(done.every((job) => job.status === JobStatus.Completed)).toBe(true);
    expect(waits.size).toBe(0);
    expect(waits.idle).toBe(true);
    await waitFor(async () => (await listenConnections(producer.workerId)) === 0, {
      description: 'the LISTEN connection to close',
    });
  });

  it('rejects JobQueueUnavailableError when the app shuts down first, and leaves no connection', async () => {
    const leaving = await file.start({ queueOptions: { worker: false, events: { remote: true } } });
    const job = await leaving.queue.enqueue('events.nobody-handles-this', {});
    const waiting = leaving.queue.waitForJob(job.id, { timeoutMs: 60_000 });
    await waitFor(async () => (await listenConnections(leaving.workerId)) === 1, {
      description: 'the LISTEN connection of the wait',
    });
    await leaving.close();
    await expect(waiting).rejects.toThrow(JobQueueUnavailableError);
    await waitFor(async () => (await listenConnections(leaving.workerId)) === 0, {
      description: 'the LISTEN connection to close',
    });
  });

  it('refuses bad input with InvalidJobInputError naming the field', async () => {
    const field = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error) => (error instanceof InvalidJobInputError ? error.field : error),
      );
    expect(await field(producer.queue.waitForJob('abc', { timeoutMs: 1_000 }))).toBe('id');
    expect(await field(producer.queue.waitForJob('0', { timeoutMs: 1_000 }))).toBe('id');
    expect(await field(producer.queue.waitForJob('1', { timeoutMs: 0 }))).toBe('timeoutMs');
    expect(await field(producer.queue.waitForJob('1', { timeoutMs: 1.5 }))).toBe('timeoutMs');
    expect(
      await field(producer.queue.waitForJob('1', {} as unknown as { timeoutMs: number })),
    ).toBe('timeoutMs');
    expect(
      await field(
        producer.queue.waitForJob('1', {
          timeoutMs: 1_000,
          signal: 'stop' as unknown as AbortSignal,
        }),
      ),
    ).toBe('signal');
  });
});

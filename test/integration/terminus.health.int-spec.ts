import { Injectable } from '@nestjs/common';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { InvalidJobQueueOptionsError, JobHandler, JobWorker } from 'nest-pg-job-queue';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

/** No handler: its jobs stay pending where the test puts them. */
const IDLE = 'health.idle';

@Injectable()
class HealthHandlers {
  @JobHandler('health.ok')
  ok(): string {
    return 'ok';
  }
}

/**
 * The terminus indicator as a readiness probe sees it: `HealthCheckService.check` with the
 * queue's indicator, healthy on a working queue, unhealthy for each threshold crossed and for a
 * stopped worker, and healthy again once the cause is gone.
 */
describe('terminus: JobQueueHealthIndicator', () => {
  const file = useWorkerTestFile();
  let worker: WorkerApp;

  beforeAll(async () => {
    worker = await file.start({
      // No reaper pass during the file: the stale row below stays stale until the test removes it.
      queueOptions: { worker: { pollIntervalMs: 50 }, reaperIntervalMs: 3_600_000 },
      imports: [TerminusModule],
      providers: [HealthHandlers, JobQueueHealthIndicator],
    });
  });

  /** What a /health endpoint answers: the check's result, or the 503's body. */
  async function probe(options?: Parameters<JobQueueHealthIndicator['isHealthy']>[1]) {
    const indicator = worker.app.get(JobQueueHealthIndicator);
    try {
      return await worker.app
        .get(HealthCheckService)
        .check([() => indicator.isHealthy('jobQueue', options)]);
    } catch (error) {
      return (error as { response: unknown }).response as {
        status: string;
        error: Record<string, Record<string, unknown>>;
      };
    }
  }

  const sql = (text: string, parameters: unknown[] = []): Promise<unknown> =>
    worker.dataSource.query(text, parameters);

  it('is healthy on a working queue: the database answers and the worker polls', async () => {
    expect(await probe()).toMatchObject({
      status: 'ok',
      info: { jobQueue: { status: 'up', database: 'up', worker: 'running' } },
    });
  });

  it('turns unhealthy while the next job in line has been due longer than maxDueWaitMs', async () => {
    const job = await worker.queue.enqueue(IDLE, {}, { runAt: new Date(Date.now() - 3_600_000) });
    const down = await probe({ maxDueWaitMs: 60_000 });
    expect(down).toMatchObject({
      status: 'error',
      error: {
        jobQueue: { status: 'down', message: expect.stringMatching(/maxDueWaitMs \(60000\)/) },
      },
    });
    expect(await probe({ maxDueWaitMs: 7_200_000 })).toMatchObject({ status: 'ok' });
    await worker.queue.pause(IDLE); // a paused type's jobs wait on purpose
    expect(await probe({ maxDueWaitMs: 60_000 })).toMatchObject({ status: 'ok' });
    await worker.queue.resume(IDLE);
    await worker.queue.cancel(job.id);
    expect(await probe({ maxDueWaitMs: 60_000 })).toMatchObject({ status: 'ok' });
  });

  it('turns unhealthy when more than maxFailed.count jobs failed in the period', async () => {
    await sql(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, completed_at, last_error)
       SELECT $1, 'failed', 1, now() - (n || ' seconds')::interval, 'boom'
       FROM generate_series(1, 3) AS n`,
      [IDLE],
    );
    expect(await probe({ maxFailed: { count: 2, periodMs: 60_000 } })).toMatchObject({
      status: 'error',
      error: { jobQueue: { failedRecently: 3, message: expect.stringMatching(/More than 2/) } },
    });
    expect(await probe({ maxFailed: { count: 3, periodMs: 60_000 } })).toMatchObject({
      status: 'ok',
    });
    // Out of the period, they no longer count.
    await sql(`UPDATE job_queue.jobs SET completed_at = now() - interval '2 hours'
               WHERE status = 'failed'`);
    expect(await probe({ maxFailed: { count: 0, periodMs: 60_000 } })).toMatchObject({
      status: 'ok',
    });
  });

  it('turns unhealthy while a job is held past its lease, with failOnStaleJobs', async () => {
    const [{ id }] = (await sql(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, worker_id, claimed_at, heartbeat_at)
       VALUES ($1, 'running', 1, 'gone-worker', now() - interval '2 hours',
               now() - interval '2 hours') RETURNING id`,
      [IDLE],
    )) as Array<{ id: string }>;
    expect(await probe({ failOnStaleJobs: true })).toMatchObject({
      status: 'error',
      error: { jobQueue: { staleJobs: true, message: expect.stringMatching(/past their lease/) } },
    });
    expect(await probe()).toMatchObject({ status: 'ok' }); // not asked
    await sql(`DELETE FROM job_queue.jobs WHERE id = $1`, [id]);
    expect(await probe({ failOnStaleJobs: true })).toMatchObject({ status: 'ok' });
  });

  it('turns unhealthy while the worker is stopped, and healthy once it runs again', async () => {
    const jobWorker = worker.app.get(JobWorker);
    await jobWorker.stop();
    try {
      expect(await probe()).toMatchObject({
        status: 'error',
        error: { jobQueue: { worker: 'stopped', message: 'The worker is not running' } },
      });
    } finally {
      await jobWorker.start();
    }
    expect(await probe()).toMatchObject({ status: 'ok' });
  });

  it('turns unhealthy when the worker has not polled within workerStallMs', async () => {
    // A worker that polls every 10 minutes (no LISTEN wake-up comes: nothing is enqueued for it):
    // after its first poll, its loop is as still as a stuck one.
    const idle = await file.start({
      queueOptions: { worker: { pollIntervalMs: 600_000, jobTypes: ['health.ok'] } },
      imports: [TerminusModule],
      providers: [HealthHandlers, JobQueueHealthIndicator],
    });
    const check = () =>
      idle.app
        .get(HealthCheckService)
        .check([
          () => idle.app.get(JobQueueHealthIndicator).isHealthy('jobQueue', { workerStallMs: 200 }),
        ])
        .catch((error: { response: unknown }) => error.response);
    const stalled = await waitFor(
      async () => {
        const result = (await check()) as { status: string };
        return result.status === 'error' ? result : undefined;
      },
      { timeoutMs: 10_000, description: 'the idle worker to count as stalled' },
    );
    expect(stalled).toMatchObject({
      error: {
        jobQueue: {
          worker: 'stalled',
          message: expect.stringMatching(/has not polled for \d+ ms \(workerStallMs 200\)/),
        },
      },
    });
    await idle.close();
  });

  it('refuses bad options, naming the option and its value', async () => {
    const indicator = worker.app.get(JobQueueHealthIndicator);
    await expect(indicator.isHealthy('jobQueue', { timeoutMs: -1 })).rejects.toThrow(
      InvalidJobQueueOptionsError,
    );
    await expect(indicator.isHealthy('jobQueue', { timeoutMs: -1 })).rejects.toThrow(
      /timeoutMs.*-1/,
    );
    await expect(
      indicator.isHealthy('jobQueue', { maxFailed: { count: 1, periodMs: 0 } }),
    ).rejects.toThrow(/maxFailed\.periodMs/);
    await expect(indicator.isHealthy('jobQueue', { maxDueWait: 5 } as never)).rejects.toThrow(
      /maxDueWait/,
    );
  });
});

describe('terminus: JobQueueHealthIndicator without a worker', () => {
  const file = useWorkerTestFile();

  it('reports no worker in a worker: false process, and is healthy', async () => {
    const producer = await file.start({
      queueOptions: { worker: false },
      imports: [TerminusModule],
      providers: [JobQueueHealthIndicator],
    });
    const result = await producer.app
      .get(HealthCheckService)
      .check([() => producer.app.get(JobQueueHealthIndicator).isHealthy()]);
    expect(result).toMatchObject({
      status: 'ok',
      info: { jobQueue: { status: 'up', database: 'up', worker: 'disabled' } },
    });
  });
});

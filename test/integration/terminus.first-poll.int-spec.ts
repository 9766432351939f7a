import { Injectable } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Client } from 'pg';
import { JobHandler, JobWorker } from 'nest-pg-job-queue';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

@Injectable()
class FirstPollHandlers {
  @JobHandler('first-poll.ok')
  ok(): string {
    return 'ok';
  }
}

/**
 * A worker from its start: not started yet (`autoStart: false`) is down, and one whose very first
 * claim never returns is reported stalled once `workerStallMs` has passed, not `running` for as
 * long as the claim hangs; healthy once the claim comes back.
 */
describe('terminus: a worker before and at its first poll', () => {
  const file = useWorkerTestFile();
  let app: WorkerApp;

  beforeAll(async () => {
    app = await file.start({
      queueOptions: { worker: { autoStart: false, pollIntervalMs: 50 } },
      imports: [TerminusModule],
      providers: [FirstPollHandlers, JobQueueHealthIndicator],
    });
  });

  /** What a /health endpoint answers: the check's result, or the 503's body. */
  const probe = (): Promise<HealthCheckResult> =>
    app.app
      .get(HealthCheckService)
      .check([
        () => app.app.get(JobQueueHealthIndicator).isHealthy('jobQueue', { workerStallMs: 300 }),
      ])
      .catch((error: { response: HealthCheckResult }) => error.response);

  it('is down while the worker has not been started (autoStart: false)', async () => {
    expect(await probe()).toMatchObject({
      status: 'error',
      error: { jobQueue: { database: 'up', worker: 'stopped' } },
    });
  });

  it('turns unhealthy when the first claim hangs, and healthy once it returns', async () => {
    // EXCLUSIVE lets reads through (SELECT 1 answers, the worker's start writes only other
    // tables) and stops every row lock and write on jobs: the first claim waits for it.
    const locker = new Client({ connectionString: file.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE job_queue.jobs IN EXCLUSIVE MODE');
      await app.app.get(JobWorker).start();

      const stalled = await waitFor(
        async () => {
          const result = await probe();
          return result.status === 'error' ? result : undefined;
        },
        { timeoutMs: 10_000, description: 'the worker in its first claim to count as stalled' },
      );
      expect(stalled).toMatchObject({
        error: {
          jobQueue: {
            database: 'up',
            worker: 'stalled',
            message: expect.stringMatching(/has not polled for \d+ ms \(workerStallMs 300\)/),
          },
        },
      });
      // Still in that claim: the lock is what held it, and it is still held.
      const { rows } = await locker.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_locks
          WHERE relation = 'job_queue.jobs'::regclass AND NOT granted`,
      );
      expect(rows[0].waiting).toBeGreaterThan(0);

      await locker.query('COMMIT');
    } finally {
      await locker.end(); // releases the lock, should an expectation have failed holding it
    }
    // Read from the probe that found it healthy: a second one could meet a slow poll on a
    // loaded machine (300 ms is short), which is not what this test is about.
    const healthy = await waitFor(
      async () => {
        const result = await probe();
        return result.status === 'ok' ? result : undefined;
      },
      { timeoutMs: 10_000, description: 'the worker to poll again once the claim returned' },
    );
    expect(healthy).toMatchObject({
      info: { jobQueue: { worker: 'running', lastPollMsAgo: expect.any(Number) } },
    });
  });
});

import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import { OwnPostgres } from '../support/own-postgres';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, WorkerApp } from '../support/worker-test-app';

const TIMEOUT_MS = 1_000;

/**
 * The readiness probe when the database goes away: on a private embedded server (never the
 * shared one), stopped and started again, the indicator answers `down` within its timeout while
 * the server is gone, and `up` again once it is back.
 */
describe('terminus: the database stopped and started again', () => {
  let server: OwnPostgres;
  let app: WorkerApp;

  beforeAll(async () => {
    server = await OwnPostgres.start();
    app = await startWorkerApp({
      url: server.url,
      queueOptions: { worker: { pollIntervalMs: 100 } },
      imports: [TerminusModule],
      providers: [JobQueueHealthIndicator],
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await server?.destroy();
  }, 60_000);

  const probe = async (): Promise<{ status: string; ms: number; body: unknown }> => {
    const started = Date.now();
    const indicator = app.app.get(JobQueueHealthIndicator);
    try {
      const body = await app.app
        .get(HealthCheckService)
        .check([() => indicator.isHealthy('jobQueue', { timeoutMs: TIMEOUT_MS })]);
      return { status: body.status, ms: Date.now() - started, body };
    } catch (error) {
      const body = (error as { response: { status: string } }).response;
      return { status: body.status, ms: Date.now() - started, body };
    }
  };

  it('is down within its timeout while the server is stopped, and up once it is back', async () => {
    expect((await probe()).status).toBe('ok');

    await server.stop();
    const down = await probe();
    expect(down.status).toBe('error');
    expect(down.body).toMatchObject({
      error: {
        jobQueue: {
          status: 'down',
          database: 'down',
          message: expect.stringMatching(/^Database: /),
        },
      },
    });
    // The timeout bounds the check (a margin for a loaded machine: a bound, not a measurement).
    expect(down.ms).toBeLessThan(TIMEOUT_MS + 2_000);

    await server.restart();
    await waitFor(async () => ((await probe()).status === 'ok' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the indicator to be healthy again',
    });
  }, 120_000);
});

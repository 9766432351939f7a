import { Client } from 'pg';
import { JobStatus } from 'nest-pg-job-queue';
import { NOTIFY_COOLDOWN_MS } from '../../libs/job-queue/src/worker/notify-cooldown';
import { QueryCounter } from '../support/query-counter';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { RECORD_JOB, RecordingHandlers } from '../fixtures/recording.handlers';

const INSERTED_CHANNEL = 'job_queue_jobs_inserted';
const NOTIFICATIONS = 30_000;
/** Notifications per statement: each statement commits on its own, so they arrive in bursts. */
const PER_STATEMENT = 50;

/**
 * Any role that can connect can NOTIFY the insert channel. A flood of notifications without
 * jobs must not turn a worker into a busy loop of claims: after a notification that found
 * nothing, notifications wake at most one poll per cooldown period.
 */
describe('worker: a flood of insert notifications', () => {
  let worker: WorkerApp;
  const statements = new QueryCounter();
  const claims = () => statements.queries.filter((sql) => /claim_job_batch\(/.test(sql)).length;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      // Polling once a minute: every claim in this test is woken by a notification.
      queueOptions: { worker: { pollIntervalMs: 60_000 } },
      providers: [RecordingHandlers],
      queryLogger: statements,
    });
  });

  it(`${NOTIFICATIONS} NOTIFYs wake at most one claim per cooldown period`, async () => {
    const idle = await worker.queue.enqueue(RECORD_JOB, { before: true });
    await waitFor(async () => (await worker.queue.getJob(idle.id)).status === JobStatus.Completed);
    const claimsBefore = claims();

    const flooder = new Client({ connectionString: file.url });
    await flooder.connect();
    const startedAt = Date.now();
    try {
      for (let sent = 0; sent < NOTIFICATIONS; sent += PER_STATEMENT) {
        // Distinct payloads: PostgreSQL folds equal notifications of one transaction into one.
        await flooder.query(
          `SELECT pg_notify($1, $2 || ':' || i) FROM generate_series(1, $3::int) AS i`,
          [INSERTED_CHANNEL, String(sent), PER_STATEMENT],
        );
      }
    } finally {
      await flooder.end();
    }
    // A real job after the flood: once it ran, the worker has read every notification before it.
    const sentinel = await worker.queue.enqueue(RECORD_JOB, { after: true });
    await waitFor(
      async () => (await worker.queue.getJob(sentinel.id)).status === JobStatus.Completed,
    );
    const elapsedMs = Date.now() - startedAt;

    const floodClaims = claims() - claimsBefore;
    // One claim per cooldown period, and a few more: the first notification, the sentinel's.
    const bound = Math.ceil(elapsedMs / NOTIFY_COOLDOWN_MS) + 5;
    expect(floodClaims).toBeGreaterThan(0);
    expect(floodClaims).toBeLessThanOrEqual(bound);
  });
});

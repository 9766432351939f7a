import { Client, Notification } from 'pg';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { claimAndStartJobs, ClaimTypes } from '../../libs/job-queue/src/sql/claim-job-batch.query';
import { releaseRuns, releaseWorkerJobs } from '../../libs/job-queue/src/sql/release-jobs.query';
import { PENDING_AGAIN_PAYLOAD } from '../../libs/job-queue/src/sql/queue-schema';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const EMAIL: ClaimTypes = {
  jobTypes: ['email'],
  caps: [null],
  maxAttempts: [3],
  backoffBaseMs: [1_000],
  backoffMaxMs: [60_000],
  backoffJitter: [0],
};

/**
 * Jobs a worker hands back (held too long, lease lapsed, type paused, shutdown) are pending
 * again: idle workers elsewhere are told at once, as after an insert, with the payload that
 * sends their next claim to the heads of the queues. Without it they would wait for their next
 * poll (a minute, with LISTEN on and a long `pollIntervalMs`).
 */
describe('releaseRuns / releaseWorkerJobs: a hand-back wakes idle workers', () => {
  const app = useQueueTestingModule();
  let listener: Client;
  let received: Array<string | undefined>;

  beforeEach(async () => {
    await app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    listener = new Client({ connectionString: app.db.url });
    await listener.connect();
    received = [];
    listener.on('notification', (message: Notification) => received.push(message.payload));
  });

  afterEach(() => listener.end());

  /** Enqueues `count` jobs, claims them as `worker-a`, then starts listening. */
  async function claimed(count: number) {
    await app.queue.enqueueMany(
      Array.from({ length: count }, (_, n) => ({ type: 'email', data: { n } })),
    );
    const { jobs } = await claimAndStartJobs(app.dataSource, DEFAULT_SCHEMA, 'worker-a', EMAIL, 10);
    expect(jobs).toHaveLength(count);
    await listener.query(`LISTEN job_queue_jobs_inserted`);
    return jobs.map((job) => ({ id: job.id, token: job.runToken }));
  }

  /** What arrived before a marker sent after the statement under test (commit order). */
  async function notifiedBeforeMarker(): Promise<Array<string | undefined>> {
    await app.dataSource.query(`SELECT pg_notify('job_queue_jobs_inserted', 'marker')`);
    await waitFor(() => received.includes('marker'), { description: 'the marker' });
    return received.slice(0, received.indexOf('marker'));
  }

  it('handing back held runs notifies once, whatever their number', async () => {
    const runs = await claimed(3);
    const released = await releaseRuns(app.dataSource, DEFAULT_SCHEMA, 'worker-a', runs);
    expect(released.sort()).toEqual(runs.map((run) => run.id).sort());
    expect(await notifiedBeforeMarker()).toEqual([PENDING_AGAIN_PAYLOAD]);
  });

  it('a hand-back that finds none of its runs (taken back already) notifies nothing', async () => {
    const runs = await claimed(2);
    const stale = runs.map((run) => ({ ...run, token: run.token + 1 }));
    expect(await releaseRuns(app.dataSource, DEFAULT_SCHEMA, 'worker-a', stale)).toEqual([]);
    expect(await notifiedBeforeMarker()).toEqual([]);
  });

  it("shutdown's release of everything a worker holds notifies once; of nothing, not at all", async () => {
    await claimed(2);
    expect(await releaseWorkerJobs(app.dataSource, DEFAULT_SCHEMA, 'worker-b')).toEqual([]);
    expect(await releaseWorkerJobs(app.dataSource, DEFAULT_SCHEMA, 'worker-a')).toHaveLength(2);
    expect(await notifiedBeforeMarker()).toEqual([PENDING_AGAIN_PAYLOAD]);
  });
});

import { Client, Notification } from 'pg';
import { InvalidJobInputError, JobQueueStats } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useQueueTestingModule } from '../support/test-app';
import { PENDING_AGAIN_PAYLOAD } from '../../libs/job-queue/src/sql/queue-schema';

const ZEROS = {
  scheduled: 0,
  pending: 0,
  waiting: 0,
  blocked: 0,
  claimed: 0,
  running: 0,
  completed: 0,
  failed: 0,
  cancelled: 0,
};

/** pause() / resume() as `job_types` rows, stats() showing them, and resume's wake-up. */
describe('QueueService: pause and resume', () => {
  const app = useQueueTestingModule();

  beforeEach(async () => {
    await app.dataSource.query(
      `TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_types`,
    );
  });

  const rows = (): Promise<Array<{ job_type: string; paused_at: Date | null }>> =>
    app.dataSource.query(`SELECT job_type, paused_at FROM job_queue.job_types ORDER BY job_type`);

  it('pause inserts the type’s row; a second pause keeps the first time', async () => {
    await app.queue.pause('email');
    const [first] = await rows();
    expect(first).toEqual({ job_type: 'email', paused_at: expect.any(Date) });

    await app.queue.pause('email');
    expect(await rows()).toEqual([first]);
  });

  it('resume clears paused_at and keeps the row; resuming what is not paused changes nothing', async () => {
    await app.queue.resume('never-paused');
    expect(await rows()).toEqual([]);

    await app.queue.pause('email');
    await app.queue.resume('email');
    expect(await rows()).toEqual([{ job_type: 'email', paused_at: null }]);
    await app.queue.resume('email');
    expect(await rows()).toEqual([{ job_type: 'email', paused_at: null }]);
  });

  it('stats() says which types are paused, lists a paused type without jobs, drops it once resumed', async () => {
    await app.queue.enqueueMany([
      { type: 'email', data: 1 },
      { type: 'email', data: 2 },
      { type: 'report', data: 3 },
    ]);
    await app.queue.pause('email');
    await app.queue.pause('idle.type');

    expect(await app.queue.stats({ maxAgeMs: 0 })).toEqual<JobQueueStats>({
      email: { ...ZEROS, pending: 2, paused: true },
      report: { ...ZEROS, pending: 1, paused: false },
      'idle.type': { ...ZEROS, paused: true },
    });

    await app.queue.resume('email');
    await app.queue.resume('idle.type');
    expect(await app.queue.stats({ maxAgeMs: 0 })).toEqual<JobQueueStats>({
      email: { ...ZEROS, pending: 2, paused: false },
      report: { ...ZEROS, pending: 1, paused: false },
    });
  });

  it('a paused type can still be enqueued into: its jobs wait as pending', async () => {
    await app.queue.pause('email');
    const job = await app.queue.enqueue('email', { to: 'a@example.com' });
    expect((await app.queue.getJob(job.id)).status).toBe('pending');
  });

  it('resume of a paused type notifies the insert channel (idle workers wake); of another, it does not', async () => {
    const listener = new Client({ connectionString: app.db.url });
    await listener.connect();
    const received: Array<string | undefined> = [];
    listener.on('notification', (message: Notification) => received.push(message.payload));
    try {
      await listener.query(`LISTEN job_queue_jobs_inserted`);
      await app.queue.pause('email');
      await app.queue.resume('email');
      await waitFor(() => received.length === 1, { description: 'the resume’s notification' });
      // With the payload that sends the workers' next claim to the heads of the queues: jobs
      // handed back at the pause are behind where claims resume.
      expect(received).toEqual([PENDING_AGAIN_PAYLOAD]);

      // Not paused: no notification. A marker sent after it arrives alone (commit order).
      await app.queue.resume('email');
      await app.queue.resume('never-paused');
      await app.dataSource.query(`SELECT pg_notify('job_queue_jobs_inserted', 'marker')`);
      await waitFor(() => received.includes('marker'), { description: 'the marker' });
      expect(received).toEqual([PENDING_AGAIN_PAYLOAD, 'marker']);
    } finally {
      await listener.end();
    }
  });

  it.each([
    ['an empty string', ''],
    ['blank text', '  '],
    ['a number', 42],
    ['undefined', undefined],
    ['256 characters', 'x'.repeat(256)],
    ['NUL', 'a\u0000b'],
    ['an unpaired surrogate', 'a\ud800b'],
  ])(
    'refuses %s as the type (InvalidJobInputError, field type), writing nothing',
    async (_, type) => {
      for (const call of [
        () => app.queue.pause(type as string),
        () => app.queue.resume(type as string),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidJobInputError);
        expect(error).toMatchObject({ field: 'type', value: type });
      }
      expect(await rows()).toEqual([]);
    },
  );
});

import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { Job } from 'nest-pg-job-queue';
import { claimAndStartJobs, ClaimTypes } from '../../libs/job-queue/src/sql/claim-job-batch.query';
import { useQueueTestingModule } from '../support/test-app';

/** `email`, uncapped, with a handler policy of 4 attempts and a 1-60 s backoff. */
const EMAIL: ClaimTypes = {
  jobTypes: ['email'],
  caps: [null],
  maxAttempts: [4],
  backoffBaseMs: [1_000],
  backoffMaxMs: [60_000],
  backoffJitter: [0.25],
};

// The worker's claim reads timestamps as text and parses them itself (for speed); these pin that
// a handler's `job` is exactly what `getJob` reads, whatever the session's time zone.
describe('claimAndStartJobs: the Job a handler receives', () => {
  const app = useQueueTestingModule();

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  const claimIn = (timeZone: string): Promise<Job[]> =>
    app.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT set_config('TimeZone', $1, true)`, [timeZone]);
      return (await claimAndStartJobs(manager, DEFAULT_SCHEMA, 'worker-a', EMAIL, 10)).jobs;
    });

  it.each(['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham'])(
    'equals getJob field for field with the session in %s',
    async (timeZone) => {
      const first = await app.queue.enqueue('email', { to: 'a@example.com' }, { priority: 5 });
      const second = await app.queue.enqueue('email', { to: 'b@example.com' }, { maxAttempts: 2 });
      // Microseconds, and a date before 1970: both must truncate to the same millisecond as pg's parser.
      await app.dataSource.query(
        `UPDATE job_queue.jobs SET created_at = '1969-12-31 23:59:59.999500+00',
                         run_at = '2020-02-29 12:34:56.789999+00' WHERE id = $1`,
        [first.id],
      );

      const claimed = await claimIn(timeZone);

      expect(claimed.map((job) => job.id)).toEqual([second.id, first.id]);
      for (const job of claimed) {
        expect(job).toBeInstanceOf(Job);
        expect(job).toEqual(await app.queue.getJob(job.id));
        expect(job).toMatchObject({ status: 'running', workerId: 'worker-a', attempts: 1 });
        // A new fencing token, and the handler's policy where the row had none of its own.
        expect(job).toMatchObject({
          runToken: 1,
          maxAttempts: job.id === second.id ? 2 : 4,
          backoffBaseMs: 1_000,
          backoffMaxMs: 60_000,
          backoffJitter: 0.25,
        });
        expect(job.startedAt).toBeInstanceOf(Date);
      }
      expect(claimed[1].createdAt.toISOString()).toBe('1969-12-31T23:59:59.999Z');
      expect(claimed[1].runAt.toISOString()).toBe('2020-02-29T12:34:56.789Z');
    },
  );

  it('gives every job Dates of its own, so a handler changing one changes no other job', async () => {
    await app.queue.enqueueMany([
      { type: 'email', data: {} },
      { type: 'email', data: {} },
    ]);
    const {
      jobs: [a, b],
    } = await claimAndStartJobs(app.dataSource, DEFAULT_SCHEMA, 'worker-a', EMAIL, 10);
    expect(a.claimedAt).toEqual(b.claimedAt);
    a.claimedAt!.setFullYear(2000);
    expect(b.claimedAt!.getFullYear()).not.toBe(2000);
  });

  it('commits its claim asynchronously without changing the pooled connection for others', async () => {
    await app.queue.enqueue('email', {});
    const queryRunner = app.dataSource.createQueryRunner();
    try {
      const before = await queryRunner.query(`SHOW synchronous_commit`);
      const {
        jobs: [job],
      } = await claimAndStartJobs(queryRunner, DEFAULT_SCHEMA, 'worker-a', EMAIL, 10);
      expect(job.status).toBe('running');
      // The next statement on the same connection (an app's, once it is back in the pool).
      expect(await queryRunner.query(`SHOW synchronous_commit`)).toEqual(before);
      expect(before).toEqual([{ synchronous_commit: 'on' }]);
    } finally {
      await queryRunner.release();
    }
  });
});

import { InvalidJobInputError, JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService.redrive', () => {
  const app = useQueueTestingModule();

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  /** Adds a job of `type` in `status`, finished `finishedAgo` ago (SQL interval). */
  async function job(
    type: string,
    status: JobStatus,
    { finishedAgo = '1 minute', uniqueKey = null as string | null } = {},
  ): Promise<string> {
    const finished = [JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled].includes(status);
    const [{ id }]: Array<{ id: string }> = await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, max_attempts, last_error,
                                   completed_at, unique_key)
       VALUES ($1, $2, 3, 3, 'boom', CASE WHEN $3 THEN now() - $4::interval END, $5)
       RETURNING id::text`,
      [type, status, finished, finishedAgo, uniqueKey],
    );
    return id;
  }

  async function statusOf(id: string): Promise<JobStatus> {
    return (await app.queue.getJob(id)).status;
  }

  it('puts every failed job back to pending with fresh attempts, to run now, and counts them', async () => {
    const failed = [await job('a', JobStatus.Failed), await job('b', JobStatus.Failed)];
    const others = [
      await job('a', JobStatus.Completed),
      await job('a', JobStatus.Cancelled),
      await job('a', JobStatus.Pending),
    ];
    const [{ now }]: Array<{ now: Date }> = await app.dataSource.query(`SELECT now() AS now`);
    expect(await app.queue.redrive()).toBe(2);
    for (const id of failed) {
      const redriven = await app.queue.getJob(id);
      expect(redriven).toMatchObject({
        status: JobStatus.Pending,
        attempts: 0,
        maxAttempts: 3,
        completedAt: null,
        workerId: null,
      });
      expect(redriven.runAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
    }
    expect(await Promise.all(others.map(statusOf))).toEqual([
      JobStatus.Completed,
      JobStatus.Cancelled,
      JobStatus.Pending,
    ]);
    expect(await app.queue.redrive()).toBe(0);
  });

  it('takes only the type, the failures since and the ids it is given', async () => {
    const oldA = await job('a', JobStatus.Failed, { finishedAgo: '2 days' });
    const newA = await job('a', JobStatus.Failed, { finishedAgo: '1 hour' });
    const newB = await job('b', JobStatus.Failed, { finishedAgo: '1 hour' });
    const since = new Date(Date.now() - 24 * 3_600_000);
    expect(await app.queue.redrive({ type: 'a', since })).toBe(1);
    expect(await statusOf(newA)).toBe(JobStatus.Pending);
    expect(await statusOf(oldA)).toBe(JobStatus.Failed);
    expect(await statusOf(newB)).toBe(JobStatus.Failed);

    expect(await app.queue.redrive({ ids: [Number(oldA), '999999', newA] })).toBe(1);
    expect(await statusOf(oldA)).toBe(JobStatus.Pending);
    expect(await statusOf(newB)).toBe(JobStatus.Failed);
  });

  it('moves more than one batch (a thousand jobs per statement)', async () => {
    await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, max_attempts, completed_at)
       SELECT 'bulk', 'failed', 3, 3, now() FROM pg_catalog.generate_series(1, 2500)`,
    );
    await job('bulk', JobStatus.Completed);
    expect(await app.queue.redrive({ type: 'bulk' })).toBe(2500);
    const [{ failed }]: Array<{ failed: number }> = await app.dataSource.query(
      `SELECT count(*)::int AS failed FROM job_queue.jobs WHERE status = 'failed'`,
    );
    expect(failed).toBe(0);
  });

  it("leaves a job failed when its unique key is held, and moves one of a key's failed jobs", async () => {
    const held = await job('k', JobStatus.Failed, { uniqueKey: 'report:1' });
    const holder = await job('k', JobStatus.Pending, { uniqueKey: 'report:1' });
    const first = await job('k', JobStatus.Failed, { uniqueKey: 'report:2' });
    const second = await job('k', JobStatus.Failed, { uniqueKey: 'report:2' });
    expect(await app.queue.redrive()).toBe(1);
    expect(await statusOf(held)).toBe(JobStatus.Failed);
    expect(await statusOf(holder)).toBe(JobStatus.Pending);
    expect(await statusOf(first)).toBe(JobStatus.Pending);
    expect(await statusOf(second)).toBe(JobStatus.Failed);
  });

  it.each([
    [{ type: '' }, 'type'],
    [{ since: '2026-01-01' }, 'since'],
    [{ since: new Date('nope') }, 'since'],
    [{ ids: [] }, 'ids'],
    [{ ids: ['1', 'x'] }, 'ids[1]'],
    [{ ids: Array.from({ length: 1_001 }, (_, i) => i + 1) }, 'ids'],
    [{ status: 'failed' }, 'status'],
  ])('refuses %p naming the field, before any write', async (options, field) => {
    const failed = await job('a', JobStatus.Failed);
    const error = await app.queue
      .redrive(options as Parameters<typeof app.queue.redrive>[0])
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toMatchObject({ field });
    expect(await statusOf(failed)).toBe(JobStatus.Failed);
  });
});

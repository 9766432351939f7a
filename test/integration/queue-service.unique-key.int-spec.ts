import { JobStateConflictError, JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

describe('QueueService: uniqueKey (at most one unfinished job per key)', () => {
  const app = useQueueTestingModule();

  const rowsWithKey = async (key: string): Promise<Array<{ id: string; status: string }>> =>
    app.dataSource.query(
      `SELECT id, status FROM job_queue.jobs WHERE unique_key = $1 ORDER BY id`,
      [key],
    );

  const setStatus = (id: string, status: JobStatus): Promise<unknown> =>
    app.dataSource.query(`UPDATE job_queue.jobs SET status = $2 WHERE id = $1`, [id, status]);

  it('a duplicate while the first is unfinished returns the first job, unchanged', async () => {
    const first = await app.queue.enqueue('report', { month: '2026-11' }, { uniqueKey: 'dup-1' });
    const second = await app.queue.enqueue(
      'report',
      { month: 'other' },
      { uniqueKey: 'dup-1', priority: 5 },
    );

    expect(second.id).toBe(first.id);
    // The holder is returned as stored: the duplicate's data and options are not applied.
    expect(second).toMatchObject({ data: { month: '2026-11' }, priority: 100, uniqueKey: 'dup-1' });
    expect(await rowsWithKey('dup-1')).toEqual([{ id: first.id, status: 'pending' }]);
  });

  // A waiting job (set aside while its concurrency key is at its limit) is unfinished too.
  it.each([JobStatus.Waiting, JobStatus.Claimed, JobStatus.Running])(
    'a duplicate of a %s job still returns it',
    async (status) => {
      const key = `dup-held-${status}`;
      const first = await app.queue.enqueue('report', {}, { uniqueKey: key });
      await setStatus(first.id, status);

      const second = await app.queue.enqueue('report', {}, { uniqueKey: key });

      expect(second).toMatchObject({ id: first.id, status });
      expect(await rowsWithKey(key)).toHaveLength(1);
    },
  );

  it('a waiting holder is returned at every position of an enqueueMany, and only it', async () => {
    const holder = await app.queue.enqueue(
      'report',
      { holder: true },
      { uniqueKey: 'dup-waiting-many', concurrencyKey: 'tenant-1' },
    );
    await setStatus(holder.id, JobStatus.Waiting);

    const jobs = await app.queue.enqueueMany([
      { type: 'report', data: { n: 1 }, uniqueKey: 'dup-waiting-many' },
      { type: 'report', data: { n: 2 }, uniqueKey: 'dup-waiting-many', concurrencyKey: 'other' },
    ]);

    expect(jobs.map((job) => job.id)).toEqual([holder.id, holder.id]);
    expect(jobs[1]).toMatchObject({
      status: JobStatus.Waiting,
      data: { holder: true },
      concurrencyKey: 'tenant-1',
    });
    expect(await rowsWithKey('dup-waiting-many')).toEqual([{ id: holder.id, status: 'waiting' }]);
  });

  it('cancelling a waiting holder frees its key', async () => {
    const holder = await app.queue.enqueue('report', {}, { uniqueKey: 'dup-cancel-waiting' });
    await setStatus(holder.id, JobStatus.Waiting);

    expect(await app.queue.cancel(holder.id)).toMatchObject({ status: JobStatus.Cancelled });
    const next = await app.queue.enqueue('report', {}, { uniqueKey: 'dup-cancel-waiting' });

    expect(next.id).not.toBe(holder.id);
    expect(await rowsWithKey('dup-cancel-waiting')).toEqual([
      { id: holder.id, status: 'cancelled' },
      { id: next.id, status: 'pending' },
    ]);
  });

  it('a failed job is not retried while a waiting job holds its key', async () => {
    const old = await app.queue.enqueue('report', {}, { uniqueKey: 'dup-retry-waiting' });
    await setStatus(old.id, JobStatus.Failed);
    const holder = await app.queue.enqueue('report', {}, { uniqueKey: 'dup-retry-waiting' });
    await setStatus(holder.id, JobStatus.Waiting);

    await expect(app.queue.retry(old.id)).rejects.toThrow(
      new JobStateConflictError(old.id, JobStatus.Failed, 'retried', {
        uniqueKey: 'dup-retry-waiting',
        jobId: holder.id,
        status: JobStatus.Waiting,
      }),
    );
    expect(await rowsWithKey('dup-retry-waiting')).toEqual([
      { id: old.id, status: 'failed' },
      { id: holder.id, status: 'waiting' },
    ]);
  });

  it.each([JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled])(
    'once the holder is %s, the same key makes a new job',
    async (status) => {
      const key = `dup-finished-${status}`;
      const first = await app.queue.enqueue('report', { n: 1 }, { uniqueKey: key });
      await setStatus(first.id, status);

      const second = await app.queue.enqueue('report', { n: 2 }, { uniqueKey: key });

      expect(second.id).not.toBe(first.id);
      expect(second).toMatchObject({ status: JobStatus.Pending, data: { n: 2 }, uniqueKey: key });
      // The finished job keeps its key for the record.
      expect(await rowsWithKey(key)).toEqual([
        { id: first.id, status },
        { id: second.id, status: 'pending' },
      ]);
      // And the new one now holds the key.
      expect((await app.queue.enqueue('report', { n: 3 }, { uniqueKey: key })).id).toBe(second.id);
    },
  );

  it('20 concurrent duplicates make exactly one row and all return its id', async () => {
    const jobs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.queue.enqueue('report', { caller: i }, { uniqueKey: 'dup-concurrent' }),
      ),
    );

    const rows = await rowsWithKey('dup-concurrent');
    expect(rows).toHaveLength(1);
    expect(new Set(jobs.map((job) => job.id))).toEqual(new Set([rows[0].id]));
  });

  it('20 concurrent duplicates after the holder finished still make exactly one new row', async () => {
    const old = await app.queue.enqueue('report', {}, { uniqueKey: 'dup-concurrent-2' });
    await setStatus(old.id, JobStatus.Completed);

    const jobs = await Promise.all(
      Array.from({ length: 20 }, () =>
        app.queue.enqueue('report', {}, { uniqueKey: 'dup-concurrent-2' }),
      ),
    );

    const unfinished = (await rowsWithKey('dup-concurrent-2')).filter(
      (row) => row.status === 'pending',
    );
    expect(unfinished).toHaveLength(1);
    expect(new Set(jobs.map((job) => job.id))).toEqual(new Set([unfinished[0].id]));
  });

  it('jobs without a key are never deduplicated', async () => {
    const a = await app.queue.enqueue('no_key', { same: true });
    const b = await app.queue.enqueue('no_key', { same: true });
    expect(a.id).not.toBe(b.id);
    expect(a.uniqueKey).toBeNull();
  });

  it('the same key under different job types is still one job (keys are global)', async () => {
    const a = await app.queue.enqueue('type_a', {}, { uniqueKey: 'global-key' });
    const b = await app.queue.enqueue('type_b', {}, { uniqueKey: 'global-key' });
    expect(b.id).toBe(a.id);
    expect(b.jobType).toBe('type_a');
  });
});

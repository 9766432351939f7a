import { Job, JobNotFoundError } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

class Rollback extends Error {}

describe('QueueService: enqueue inside the caller transaction (`manager`)', () => {
  const app = useQueueTestingModule();

  const countByType = async (jobType: string): Promise<number> =>
    (
      await app.dataSource.query(
        `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type = $1`,
        [jobType],
      )
    )[0].count;

  it('a job enqueued in a rolled-back transaction does not exist afterwards', async () => {
    let enqueued: Job | undefined;
    await expect(
      app.dataSource.transaction(async (manager) => {
        enqueued = await app.queue.enqueue('tx_rollback', { n: 1 }, { manager });
        // The transaction itself sees its job.
        const [row] = await manager.query(`SELECT status FROM job_queue.jobs WHERE id = $1`, [
          enqueued.id,
        ]);
        expect(row).toEqual({ status: 'pending' });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);

    expect(enqueued?.id).toEqual(expect.stringMatching(/^\d+$/));
    await expect(app.queue.getJob(enqueued!.id)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await countByType('tx_rollback')).toBe(0);
  });

  it('a job enqueued in a committed transaction exists, and only once it commits', async () => {
    const enqueued = await app.dataSource.transaction(async (manager) => {
      const job = await app.queue.enqueue('tx_commit', { n: 2 }, { manager });
      // Not yet visible to other connections: the insert is part of the open transaction.
      await expect(app.queue.getJob(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
      expect(await countByType('tx_commit')).toBe(0);
      return job;
    });

    const stored = await app.queue.getJob(enqueued.id);
    expect(stored).toMatchObject({ id: enqueued.id, jobType: 'tx_commit', data: { n: 2 } });
    expect(await countByType('tx_commit')).toBe(1);
  });

  it('enqueueMany with `manager` follows the transaction too', async () => {
    await expect(
      app.dataSource.transaction(async (manager) => {
        await app.queue.enqueueMany(
          [
            { type: 'tx_many_rollback', data: 1 },
            { type: 'tx_many_rollback', data: 2 },
          ],
          { manager },
        );
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect(await countByType('tx_many_rollback')).toBe(0);

    const jobs = await app.dataSource.transaction((manager) =>
      app.queue.enqueueMany(
        [
          { type: 'tx_many_commit', data: 1 },
          { type: 'tx_many_commit', data: 2 },
        ],
        { manager },
      ),
    );
    expect(jobs.map((job) => job.data)).toEqual([1, 2]);
    expect(await countByType('tx_many_commit')).toBe(2);
  });

  it('a unique key taken in a rolled-back transaction is free again', async () => {
    await expect(
      app.dataSource.transaction(async (manager) => {
        await app.queue.enqueue('tx_unique', { first: true }, { manager, uniqueKey: 'tx-key' });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);

    const job = await app.queue.enqueue('tx_unique', { first: false }, { uniqueKey: 'tx-key' });
    expect(job.data).toEqual({ first: false });
    expect(await countByType('tx_unique')).toBe(1);
  });
});

import { Client } from 'pg';
import { useQueueTestingModule } from '../support/test-app';
import { lockWaiters } from '../support/lock-waiters';
import { waitFor } from '../support/wait-for';

/**
 * Redrive beside other transactions: one holding some of its jobs (another redrive, a retry),
 * one enqueueing a key one of its jobs has. Either way it moves everything it can and says what
 * it left failed, and why.
 */
describe('QueueService.redrive beside other transactions', () => {
  const app = useQueueTestingModule();
  let other: Client;

  beforeEach(async () => {
    await app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    other = new Client({ connectionString: app.db.url });
    await other.connect();
  });
  afterEach(() => other.end());

  /** `n` failed jobs of `type`; returns their ids, ascending. */
  const failed = async (type: string, n: number, keyOf?: (i: number) => string | null) =>
    (
      await app.dataSource.query<Array<{ id: string }>>(
        `INSERT INTO job_queue.jobs (job_type, status, attempts, max_attempts, completed_at,
                                     unique_key)
         SELECT $1, 'failed', 3, 3, now(), ($3::text[])[g]
         FROM pg_catalog.generate_series(1, $2::int) AS g
         RETURNING id::text`,
        [type, n, Array.from({ length: n }, (_, i) => keyOf?.(i) ?? null)],
      )
    ).map((row) => row.id);

  const count = async (status: string) =>
    (
      await app.dataSource.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM job_queue.jobs WHERE status = $1`,
        [status],
      )
    )[0].n;

  const waitsForALock = () =>
    waitFor(async () => (await lockWaiters(other)) > 0, {
      description: 'the redrive to wait for the other transaction',
    });

  it('goes past a batch another transaction holds, to the end of the scan', async () => {
    const ids = await failed('bulk', 2_500);
    // Another redrive (or a retry) holds the first thousand: they are its to move.
    await other.query('BEGIN');
    await other.query(`SELECT 1 FROM job_queue.jobs WHERE id = ANY ($1::bigint[]) FOR UPDATE`, [
      ids.slice(0, 1_000),
    ]);
    expect(await app.queue.redrive({ type: 'bulk', report: true })).toEqual({
      moved: 1_500,
      skipped: { uniqueKey: 0, locked: 1_000 },
    });
    await other.query('ROLLBACK');
    expect(await count('failed')).toBe(1_000);
  });

  it('leaves failed only the job whose key an enqueue took meanwhile, and moves the rest', async () => {
    await failed('keyed', 50, (i) => `order-${i}`);
    // An enqueue of order-7, not yet committed when the redrive looks for holders.
    await other.query('BEGIN');
    await other.query(
      `INSERT INTO job_queue.jobs (job_type, status, unique_key) VALUES ('keyed', 'pending', 'order-7')`,
    );
    const redrive = app.queue.redrive({ type: 'keyed', report: true });
    await waitsForALock();
    await other.query('COMMIT');
    expect(await redrive).toEqual({ moved: 49, skipped: { uniqueKey: 1, locked: 0 } });
    expect(await count('failed')).toBe(1);
  });
});

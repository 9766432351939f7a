import { claim, idsOf, useClaimTestDatabase } from './claim-job-batch.support';

/** A fixed "now" far from the wall clock: every run_at below is relative to it, via `p_now`. */
const NOW = new Date('2031-06-01T12:00:00Z');
const at = (offsetMs: number): Date => new Date(NOW.getTime() + offsetMs);

describe('claim_job_batch: run_at', () => {
  const db = useClaimTestDatabase();

  const insert = async (id: number, priority: number, runAt: Date): Promise<void> => {
    await db.client.query(
      `INSERT INTO job_queue.jobs (id, job_type, priority, run_at, created_at) VALUES ($1, 'email', $2, $3, $4)`,
      [id, priority, runAt, new Date('2031-01-01T00:00:00Z')],
    );
  };

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
  });

  it('never claims a job whose run_at is after p_now, and claims it once p_now reaches run_at', async () => {
    await insert(1, 900, at(60_000)); // the best job, but not due for a minute
    await insert(2, 100, at(-1_000));
    await insert(3, 100, at(0));

    // The future job neither comes back nor blocks the due ones behind it.
    expect(idsOf(await claim(db.client, 'w', ['email'], 10, NOW))).toEqual([2, 3]);
    expect(idsOf(await claim(db.client, 'w', ['email'], 10, at(59_999)))).toEqual([]);

    const due = await claim(db.client, 'w', ['email'], 10, at(60_000));
    expect(idsOf(due)).toEqual([1]);
    expect(due[0].claimed_at).toEqual(at(60_000));
  });

  it('puts a job that has just become due ahead of lower-priority jobs that waited longer', async () => {
    await insert(1, 100, at(-3_600_000));
    await insert(2, 100, at(-60_000));
    await insert(3, 500, at(30_000));

    expect(idsOf(await claim(db.client, 'w', ['email'], 1, NOW))).toEqual([1]);
    expect(idsOf(await claim(db.client, 'w', ['email'], 1, at(30_000)))).toEqual([3]);
    expect(idsOf(await claim(db.client, 'w', ['email'], 1, at(30_000)))).toEqual([2]);
  });

  it("without p_now, uses the transaction's now()", async () => {
    await db.client.query(
      `INSERT INTO job_queue.jobs (id, job_type, run_at) VALUES
         (1, 'email', now() + interval '1 hour'),
         (2, 'email', now() - interval '1 second')`,
    );

    await db.client.query('BEGIN');
    try {
      const rows = await claim(db.client, 'w', ['email'], 10);
      const {
        rows: [{ now }],
      } = await db.client.query<{ now: Date }>(`SELECT now()`);
      expect(idsOf(rows)).toEqual([2]);
      expect(rows[0].claimed_at).toEqual(now);
    } finally {
      await db.client.query('COMMIT');
    }

    // Not yet by the server's clock; due once p_now is its run_at.
    expect(await claim(db.client, 'w', ['email'], 10)).toEqual([]);
    // As text: a JS Date would drop the microseconds and land just before run_at.
    const {
      rows: [{ run_at: runAt }],
    } = await db.client.query<{ run_at: string }>(
      `SELECT run_at::text FROM job_queue.jobs WHERE id = 1`,
    );
    expect(idsOf(await claim(db.client, 'w', ['email'], 10, runAt))).toEqual([1]);
  });
});

import { claim, idsOf, jobsById, useClaimTestDatabase } from './claim-job-batch.support';

const CREATED = new Date('2031-01-01T00:00:00Z');
const RUN_AT = new Date('2031-01-01T00:00:05Z');
const T1 = new Date('2031-02-01T10:00:00Z');
const T2 = new Date('2031-02-01T11:00:00Z');
const T3 = new Date('2031-02-01T12:00:00Z');

describe('claim_job_batch: what a claim writes', () => {
  const db = useClaimTestDatabase();

  /** Back to pending, as a failed attempt would leave it (attempts kept). */
  const release = (id: number) =>
    db.client.query(
      `UPDATE job_queue.jobs SET status = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL
       WHERE id = $1`,
      [id],
    );

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    await db.client.query(
      `INSERT INTO job_queue.jobs (id, job_type, priority, data, max_attempts, created_at, run_at, updated_at)
       VALUES (1, 'email', 300, '{"to": "a@example.com"}', 5, $1, $2, $1),
              (2, 'email', 200, '{"to": "b@example.com"}', NULL, $1, $2, $1)`,
      [CREATED, RUN_AT],
    );
  });

  it("with p_start => true marks the jobs 'running' with started_at in the same statement", async () => {
    const { rows } = await db.client.query(
      `SELECT * FROM job_queue.claim_job_batch('worker-a', ARRAY['email'], 2, $1, p_start => true)`,
      [T1],
    );
    expect(rows.map((row) => Number(row.id))).toEqual([1, 2]);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'running', started_at: T1, claimed_at: T1, attempts: 1 });
    }
    const stored = await jobsById(db.client, [1, 2]);
    expect(stored.map((row) => row.status)).toEqual(['running', 'running']);
  });

  it("sets status 'claimed', worker_id, claimed_at, heartbeat_at and attempts + 1, and returns the stored row", async () => {
    const [claimed, ...rest] = await claim(db.client, 'worker-a', ['email'], 1, T1);

    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({
      id: 1,
      status: 'claimed',
      worker_id: 'worker-a',
      claimed_at: T1,
      heartbeat_at: T1,
      updated_at: T1,
      attempts: 1,
      // Left as they were:
      job_type: 'email',
      priority: 300,
      data: { to: 'a@example.com' },
      max_attempts: 5,
      created_at: CREATED,
      run_at: RUN_AT,
      started_at: null,
    });
    const [stored, other] = await jobsById(db.client, [1, 2]);
    expect(stored).toEqual(claimed);

    // The job the batch had no room for is untouched.
    expect(other).toMatchObject({
      id: 2,
      status: 'pending',
      worker_id: null,
      claimed_at: null,
      heartbeat_at: null,
      updated_at: CREATED,
      attempts: 0,
    });
  });

  it('increments attempts by 1 on every claim and records the latest worker and time', async () => {
    const first = await claim(db.client, 'worker-a', ['email'], 1, T1);
    expect(first).toMatchObject([{ id: 1, attempts: 1, worker_id: 'worker-a', claimed_at: T1 }]);

    await release(1);
    const second = await claim(db.client, 'worker-b', ['email'], 1, T2);
    expect(second).toMatchObject([
      { id: 1, attempts: 2, worker_id: 'worker-b', claimed_at: T2, heartbeat_at: T2 },
    ]);

    await release(1);
    const third = await claim(db.client, 'worker-c', ['email'], 1, T3);
    expect(third).toMatchObject([
      { id: 1, attempts: 3, worker_id: 'worker-c', claimed_at: T3, heartbeat_at: T3 },
    ]);

    // From whatever attempts a job already had, not from a constant.
    await db.client.query(`UPDATE job_queue.jobs SET attempts = 41 WHERE id = 2`);
    const fromHigher = await claim(db.client, 'worker-a', ['email'], 5, T3);
    expect(fromHigher).toMatchObject([{ id: 2, attempts: 42 }]);
  });

  it('claims each row in a batch once', async () => {
    const rows = await claim(db.client, 'worker-a', ['email'], 10, T1);

    expect(idsOf(rows)).toEqual([1, 2]);
    expect((await jobsById(db.client, [1, 2])).map((row) => [row.attempts, row.status])).toEqual([
      [1, 'claimed'],
      [1, 'claimed'],
    ]);
    expect(await claim(db.client, 'worker-a', ['email'], 10, T2)).toEqual([]);
  });
});

import { claim, countByStatus, idsOf, useClaimTestDatabase } from './claim-job-batch.support';

interface RateLimit {
  max: number;
  perMs: number;
  byKey?: boolean;
  perKey?: number;
}

/**
 * `claim_job_batch` with the rate limits of `job_types`: at most `rate_max` starts in any window
 * of `rate_per_ms` (plus the 50 ms margin), per type or per key, on the clock the call passes
 * (`p_now`), so each window's edge is exact. Each test starts from an empty queue.
 */
describe('claim_job_batch: rate limits', () => {
  const db = useClaimTestDatabase();
  const T0 = Date.parse('2030-01-01T00:00:00.000Z');
  const at = (ms: number) => new Date(T0 + ms).toISOString();

  beforeEach(async () => {
    await db.client.query(
      `TRUNCATE job_queue.jobs, job_queue.job_types, job_queue.job_rate_starts,
                job_queue.job_rate_blocked CASCADE`,
    );
  });

  const setRate = (jobType: string, rate: RateLimit) =>
    db.client.query(
      `INSERT INTO job_queue.job_types (job_type, rate_max, rate_per_ms, rate_by_key, concurrency_per_key)
       VALUES ($1, $2, $3, $4, $5)`,
      [jobType, rate.max, rate.perMs, rate.byKey ?? false, rate.perKey ?? null],
    );

  async function insertJobs(jobType: string, keys: Array<string | null>): Promise<number[]> {
    const { rows } = await db.client.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, created_at)
       SELECT $1, k.key, clock_timestamp() FROM unnest($2::text[]) WITH ORDINALITY AS k(key, n)
       ORDER BY k.n RETURNING id`,
      [jobType, keys],
    );
    return rows.map((row) => Number(row.id));
  }

  const keysOf = (rows: object[]) =>
    rows.map((row) => (row as { concurrency_key: string | null }).concurrency_key).sort();

  it('per type: at most max in a window; the next window opens perMs (and the margin) after the first start', async () => {
    await setRate('api', { max: 3, perMs: 1000 });
    const ids = await insertJobs('api', Array(10).fill(null));

    expect(idsOf(await claim(db.client, 'w', ['api'], 10, at(0)))).toEqual(ids.slice(0, 3));
    expect(await claim(db.client, 'w', ['api'], 10, at(500))).toEqual([]);
    expect(await claim(db.client, 'w', ['api'], 10, at(1049))).toEqual([]);
    expect(idsOf(await claim(db.client, 'w', ['api'], 10, at(1051)))).toEqual(ids.slice(3, 6));
    // Nothing failed or spent an attempt by waiting.
    expect(await countByStatus(db.client)).toEqual({ claimed: 6, pending: 4 });
    const { rows } = await db.client.query(
      `SELECT count(*)::int AS n FROM job_queue.jobs WHERE status = 'pending' AND attempts = 0`,
    );
    expect(rows[0].n).toBe(4);
  });

  it('starts spread over the window each free their own slot when they leave it', async () => {
    await setRate('api', { max: 2, perMs: 1000 });
    await insertJobs('api', Array(6).fill(null));
    expect(await claim(db.client, 'w', ['api'], 1, at(0))).toHaveLength(1);
    expect(await claim(db.client, 'w', ['api'], 5, at(400))).toHaveLength(1);
    expect(await claim(db.client, 'w', ['api'], 5, at(1000))).toHaveLength(0);
    expect(await claim(db.client, 'w', ['api'], 5, at(1060))).toHaveLength(1);
    expect(await claim(db.client, 'w', ['api'], 5, at(1200))).toHaveLength(0);
    expect(await claim(db.client, 'w', ['api'], 5, at(1460))).toHaveLength(1);
  });

  it('a type at its limit leaves the batch to the other requested types', async () => {
    await setRate('api', { max: 1, perMs: 60_000 });
    await insertJobs('api', [null, null, null]);
    await insertJobs('other', [null, null, null]);
    expect(
      (await claim(db.client, 'w', ['api', 'other'], 4, at(0))).map((r) => r.job_type).sort(),
    ).toEqual(['api', 'other', 'other', 'other']);
    await insertJobs('other', [null, null]);
    expect(
      (await claim(db.client, 'w', ['api', 'other'], 4, at(10))).map((r) => r.job_type),
    ).toEqual(['other', 'other']);
  });

  it('per key: each key has its own window; unkeyed jobs are not limited by it', async () => {
    await setRate('mail', { max: 2, perMs: 1000, byKey: true });
    await insertJobs('mail', ['a', 'a', 'a', 'b', 'b', 'b', null, null]);

    expect(keysOf(await claim(db.client, 'w', ['mail'], 10, at(0)))).toEqual(
      ['a', 'a', 'b', 'b', null, null].sort(),
    );
    expect(await claim(db.client, 'w', ['mail'], 10, at(100))).toEqual([]);
    // The keys at their limit had their jobs set aside, with the moment their windows open.
    expect(await countByStatus(db.client)).toEqual({ claimed: 6, waiting: 2 });
    const blocked = await db.client.query(
      `SELECT rate_key, opens_at FROM job_queue.job_rate_blocked ORDER BY rate_key`,
    );
    expect(blocked.rows.map((r) => [r.rate_key, r.opens_at.toISOString()])).toEqual([
      ['a', at(1050)],
      ['b', at(1050)],
    ]);
    expect(await claim(db.client, 'w', ['mail'], 10, at(1040))).toEqual([]);
    expect(keysOf(await claim(db.client, 'w', ['mail'], 10, at(1051)))).toEqual(['a', 'b']);
    expect((await db.client.query(`SELECT * FROM job_queue.job_rate_blocked`)).rows).toEqual([]);
  });

  it("a burst of one key at its limit does not hold the other keys' jobs back", async () => {
    await setRate('mail', { max: 2, perMs: 1000, byKey: true });
    await insertJobs('mail', [...Array(200).fill('busy'), 'x', 'y']);
    expect(keysOf(await claim(db.client, 'w', ['mail'], 5, at(0)))).toEqual(['busy', 'busy']);
    // The next claim sets the busy key's backlog aside and reaches the others.
    const next = [
      ...(await claim(db.client, 'w', ['mail'], 5, at(1))),
      ...(await claim(db.client, 'w', ['mail'], 5, at(2))),
    ];
    expect(keysOf(next)).toEqual(['x', 'y']);
    expect(await countByStatus(db.client)).toEqual({ claimed: 4, waiting: 198 });
    // Its window opens: two of its waiting jobs come back and start, the rest wait.
    expect(keysOf(await claim(db.client, 'w', ['mail'], 5, at(1051)))).toEqual(['busy', 'busy']);
    expect(await countByStatus(db.client)).toEqual({ claimed: 6, waiting: 196 });
  });

  it('with a per-key concurrency limit too, both hold', async () => {
    await setRate('mail', { max: 2, perMs: 1000, byKey: true, perKey: 1 });
    const ids = await insertJobs('mail', ['a', 'a', 'a']);
    expect(idsOf(await claim(db.client, 'w', ['mail'], 5, at(0)))).toEqual([ids[0]]);
    await db.client.query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = $1`, [ids[0]]);
    expect(idsOf(await claim(db.client, 'w', ['mail'], 5, at(10)))).toEqual([ids[1]]);
    await db.client.query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = $1`, [ids[1]]);
    // A slot is free, but the key's window holds two starts.
    expect(await claim(db.client, 'w', ['mail'], 5, at(20))).toEqual([]);
    expect(idsOf(await claim(db.client, 'w', ['mail'], 5, at(1055)))).toEqual([ids[2]]);
  });

  it('a paused rate-limited type takes nothing and records no start', async () => {
    await setRate('api', { max: 5, perMs: 1000 });
    await db.client.query(
      `UPDATE job_queue.job_types SET paused_at = now() WHERE job_type = 'api'`,
    );
    await insertJobs('api', [null, null]);
    expect(await claim(db.client, 'w', ['api'], 5, at(0))).toEqual([]);
    expect((await db.client.query(`SELECT * FROM job_queue.job_rate_starts`)).rows).toEqual([]);
  });

  it('starts that left their window are deleted by the next claim of the type', async () => {
    await setRate('api', { max: 5, perMs: 1000 });
    await insertJobs('api', Array(4).fill(null));
    await claim(db.client, 'w', ['api'], 2, at(0));
    await claim(db.client, 'w', ['api'], 1, at(500));
    await claim(db.client, 'w', ['api'], 1, at(1100));
    const { rows } = await db.client.query(
      `SELECT started_at, starts FROM job_queue.job_rate_starts ORDER BY started_at`,
    );
    expect(rows.map((r) => [r.started_at.toISOString(), r.starts])).toEqual([
      [at(500), 1],
      [at(1100), 1],
    ]);
  });
});

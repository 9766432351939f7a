import { Client } from 'pg';
import {
  claim,
  claimAfter,
  connect,
  countByStatus,
  idsOf,
  useClaimTestDatabase,
} from './claim-job-batch.support';
import { waitFor } from '../support/wait-for';

interface Limits {
  perKey?: number;
  global?: number;
  ordered?: boolean;
}

/**
 * `claim_job_batch` with the concurrency limits of `job_types`: per key, per type across every
 * claimer, and ordered keys; the jobs of a key at its limit set aside as `waiting`, and moved back
 * by the trigger as the key's slots free up. Each test starts from an empty queue.
 */
describe('claim_job_batch: concurrency limits', () => {
  const db = useClaimTestDatabase();

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.jobs, job_queue.job_types CASCADE`);
  });

  const setLimits = (jobType: string, limits: Limits) =>
    db.client.query(
      `INSERT INTO job_queue.job_types (job_type, concurrency_per_key, global_concurrency, ordered_keys)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (job_type) DO UPDATE SET concurrency_per_key = EXCLUDED.concurrency_per_key,
         global_concurrency = EXCLUDED.global_concurrency, ordered_keys = EXCLUDED.ordered_keys`,
      [jobType, limits.perKey ?? null, limits.global ?? null, limits.ordered ?? false],
    );

  /** Inserts jobs of `jobType` with these keys (null: unkeyed), in order; returns their ids. */
  async function insertJobs(
    jobType: string,
    keys: Array<string | null>,
    client: Client = db.client,
  ): Promise<number[]> {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, created_at)
       SELECT $1, k.key, clock_timestamp() FROM unnest($2::text[]) WITH ORDINALITY AS k(key, n)
       ORDER BY k.n RETURNING id`,
      [jobType, keys],
    );
    return rows.map((row) => Number(row.id));
  }

  const keysOf = async (ids: number[]): Promise<Array<string | null>> => {
    const { rows } = await db.client.query<{ concurrency_key: string | null }>(
      `SELECT concurrency_key FROM job_queue.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );
    return rows.map((row) => row.concurrency_key);
  };

  const setStatus = (ids: number[], status: string, extra = '') =>
    db.client.query(`UPDATE job_queue.jobs SET status = $2${extra} WHERE id = ANY($1::bigint[])`, [
      ids,
      status,
    ]);

  const statusOf = async (id: number): Promise<string> =>
    (await db.client.query(`SELECT status FROM job_queue.jobs WHERE id = $1`, [id])).rows[0].status;

  it('per key: at most N of a key, other keys and unkeyed jobs fill the batch', async () => {
    await setLimits('mail', { perKey: 2 });
    await insertJobs('mail', ['a', 'a', 'a', 'a', 'b', 'b', 'b', null, null, 'c']);

    const first = await claim(db.client, 'w', ['mail'], 10);
    expect((await keysOf(idsOf(first))).sort()).toEqual(
      ['a', 'a', 'b', 'b', 'c', null, null].sort(),
    );
    // Nothing more while a and b hold both slots; c has one free, and nothing waits for it.
    expect(await claim(db.client, 'w', ['mail'], 10)).toEqual([]);
    expect(await countByStatus(db.client)).toEqual({ claimed: 7, waiting: 3 });
  });

  it('a freed slot moves the best waiting job of its key back, and the next claim takes it', async () => {
    await setLimits('mail', { perKey: 1 });
    const ids = await insertJobs('mail', ['a', 'a', 'a']);
    expect(idsOf(await claim(db.client, 'w', ['mail'], 10))).toEqual([ids[0]]);
    expect(await claim(db.client, 'w', ['mail'], 10)).toEqual([]);
    expect([await statusOf(ids[1]), await statusOf(ids[2])]).toEqual(['waiting', 'waiting']);

    await setStatus([ids[0]], 'completed');
    expect([await statusOf(ids[1]), await statusOf(ids[2])]).toEqual(['pending', 'waiting']);
    expect(idsOf(await claim(db.client, 'w', ['mail'], 10))).toEqual([ids[1]]);

    // A retry back to the queue frees the slot too: the job and its key's next wait their turn.
    await setStatus([ids[1]], 'pending');
    expect(await statusOf(ids[2])).toBe('pending');
    expect(idsOf(await claim(db.client, 'w', ['mail'], 10))).toEqual([ids[1]]);
  });

  it('raising the limit: the next release moves back as many as there are free slots', async () => {
    await setLimits('mail', { perKey: 1 });
    const ids = await insertJobs('mail', ['a', 'a', 'a', 'a']);
    await claim(db.client, 'w', ['mail'], 10);
    await claim(db.client, 'w', ['mail'], 10);
    await setLimits('mail', { perKey: 3 });
    await setStatus([ids[0]], 'completed');
    expect(idsOf(await claim(db.client, 'w', ['mail'], 10))).toEqual(ids.slice(1));
  });

  it('global: at most N of the type claimed or running, whatever the batch or the claimer', async () => {
    await setLimits('report', { global: 3 });
    const ids = await insertJobs('report', [null, null, null, null, null, 'x']);
    expect(idsOf(await claim(db.client, 'w1', ['report'], 2))).toEqual(ids.slice(0, 2));
    expect(idsOf(await claim(db.client, 'w2', ['report'], 10))).toEqual([ids[2]]);
    expect(await claim(db.client, 'w3', ['report'], 10)).toEqual([]);
    await setStatus([ids[0]], 'completed');
    expect(idsOf(await claim(db.client, 'w3', ['report'], 10))).toEqual([ids[3]]);
    // Nothing was set aside: only per-key limits do that.
    expect(await countByStatus(db.client)).toMatchObject({ pending: 2 });
  });

  it('a limited type and an unlimited one in one claim: one priority order, each within its limits', async () => {
    await setLimits('mail', { perKey: 1 });
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, priority)
       VALUES ('mail', 'a', 300), ('mail', 'a', 300), ('plain', NULL, 200), ('plain', NULL, 200),
              ('mail', 'b', 100)`,
    );
    const rows = await claim(db.client, 'w', ['mail', 'plain'], 4);
    expect(rows.map((row) => `${row.job_type}:${row.priority}`)).toEqual([
      'mail:300',
      'plain:200',
      'plain:200',
      'mail:100',
    ]);
  });

  it('beside a limited type, an unlimited one still resumes after its cursor', async () => {
    await setLimits('mail', { perKey: 1 });
    await insertJobs('mail', ['a']);
    const plain = await insertJobs('plain', [null, null, null]);
    // created_at as text: a Date would drop its microseconds and put the cursor before the job.
    const { rows } = await db.client.query(
      `SELECT priority, created_at::text AS created_at FROM job_queue.jobs WHERE id = $1`,
      [plain[0]],
    );
    const cursor = {
      jobType: 'plain',
      priority: rows[0].priority,
      createdAt: rows[0].created_at,
      id: plain[0],
    };
    const claimed = await claimAfter(db.client, ['mail', 'plain'], 10, [cursor]);
    // The job at the cursor is behind it: a claim from the heads finds it later.
    expect(idsOf(claimed).filter((id) => plain.includes(id))).toEqual(plain.slice(1));
    expect(claimed.filter((row) => row.job_type === 'mail')).toHaveLength(1);
  });

  it('ordered keys: one at a time in order; a job waiting for its retry holds its key', async () => {
    await setLimits('ledger', { perKey: 1, ordered: true });
    const ids = await insertJobs('ledger', ['k', 'k', 'k', 'm']);
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([ids[0], ids[3]]);

    // The first fails and waits out its backoff: the key's later jobs stay back.
    await setStatus([ids[0]], 'scheduled', `, run_at = now() + interval '1 hour'`);
    expect(await claim(db.client, 'w', ['ledger'], 10)).toEqual([]);
    expect(await statusOf(ids[1])).toBe('waiting');

    // Due again: it runs before them.
    await setStatus([ids[0]], 'pending', ', run_at = now()');
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([ids[0]]);
    await setStatus([ids[0]], 'completed');
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([ids[1]]);

    // Failing for good, or being cancelled while it waits for a retry, releases the key.
    await setStatus([ids[1]], 'scheduled', `, run_at = now() + interval '1 hour'`);
    await setStatus([ids[1]], 'cancelled');
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([ids[2]]);
  });

  it('ordered keys: a snoozed job (its attempt given back) holds its key; a delayed one does not', async () => {
    await setLimits('ledger', { perKey: 1, ordered: true });
    const [snoozed, next] = await insertJobs('ledger', ['k', 'k']);
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([snoozed]);
    await setStatus(
      [snoozed],
      'scheduled',
      `, attempts = 0, started_at = now(), run_at = now() + interval '1 hour'`,
    );
    expect(await claim(db.client, 'w', ['ledger'], 10)).toEqual([]);
    expect(await statusOf(next)).toBe('waiting');

    const [later] = await insertJobs('ledger', ['m']);
    await db.client.query(
      `UPDATE job_queue.jobs SET status = 'scheduled', run_at = now() + interval '1 hour'
       WHERE id = $1`,
      [later],
    );
    const [due] = await insertJobs('ledger', ['m']);
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([due]);
  });

  it('ordered keys: a job retried while a claim waits for the lock still goes first', async () => {
    await setLimits('ledger', { perKey: 1, ordered: true });
    const [first, second] = await insertJobs('ledger', ['k', 'k']);
    expect(idsOf(await claim(db.client, 'w', ['ledger'], 10))).toEqual([first]);
    await claim(db.client, 'w', ['ledger'], 10); // sets the second aside
    const [waiter, failer] = [await connect(db.database.url), await connect(db.database.url)];
    try {
      await db.client.query('BEGIN');
      await claim(db.client, 'w1', ['ledger'], 10); // holds the type's lock
      const waiting = claim(waiter, 'w2', ['ledger'], 10);
      await waitFor(async () => (await lockWaiters(db.client)) > 0, {
        description: 'the second claim to wait for the lock',
      });
      // The first fails and goes back to the queue at once (no backoff): its run_at is now, after
      // the waiting claim's call began; the trigger moves the second back too.
      await failer.query(
        `UPDATE job_queue.jobs SET status = 'pending', run_at = now() WHERE id = $1`,
        [first],
      );
      expect(await statusOf(second)).toBe('pending');
      await db.client.query('COMMIT');
      expect(idsOf(await waiting)).toEqual([first]);
    } finally {
      await waiter.end();
      await failer.end();
    }
  });

  it('claims of a limited type take turns: the second counts what the first took', async () => {
    await setLimits('mail', { perKey: 2, global: 3 });
    await insertJobs('mail', ['a', 'a', 'a', 'b', 'b']);
    const other = await connect(db.database.url);
    try {
      await db.client.query('BEGIN');
      expect(await claim(db.client, 'w1', ['mail'], 10)).toHaveLength(3);
      const second = claim(other, 'w2', ['mail'], 10);
      await waitFor(async () => (await lockWaiters(db.client)) > 0, {
        description: 'the second claim to wait for the first',
      });
      await db.client.query('COMMIT');
      expect(await second).toEqual([]);
    } finally {
      await other.end();
    }
  });

  it('a release while a claim sets its key aside waits for it, then moves a job back', async () => {
    await setLimits('mail', { perKey: 1 });
    const ids = await insertJobs('mail', ['a', 'a', 'a']);
    await claim(db.client, 'w', ['mail'], 10);
    // A job of the key committed late, after the claim: pending again, not yet set aside.
    await setStatus([ids[1], ids[2]], 'pending');
    const other = await connect(db.database.url);
    try {
      await db.client.query('BEGIN');
      expect(await claim(db.client, 'w', ['mail'], 10)).toEqual([]);
      const release = other.query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = $1`, [
        ids[0],
      ]);
      await waitFor(async () => (await lockWaiters(db.client)) > 0, {
        description: 'the release to wait for the claim',
      });
      await db.client.query('COMMIT');
      await release;
    } finally {
      await other.end();
    }
    expect([await statusOf(ids[1]), await statusOf(ids[2])]).toEqual(['pending', 'waiting']);
  });

  it('a key at its limit with a backlog: set aside in bounded steps, then never read', async () => {
    await setLimits('mail', { perKey: 1 });
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key)
       SELECT 'mail', 'busy' FROM generate_series(1, 500)`,
    );
    const other = await insertJobs('mail', ['quiet']);
    expect(await claim(db.client, 'w', ['mail'], 1)).toHaveLength(1);
    // The busy key is full: its backlog goes aside; the quiet key's job is claimed.
    const next = await claim(db.client, 'w', ['mail'], 1);
    const afterNext = await claim(db.client, 'w', ['mail'], 1);
    expect([...idsOf(next), ...idsOf(afterNext)]).toEqual(other);
    expect(await countByStatus(db.client)).toEqual({ claimed: 2, waiting: 499 });
  });

  it('types without limits claim as before, keys or not', async () => {
    const ids = await insertJobs('plain', ['a', 'a', 'a', null]);
    expect(idsOf(await claim(db.client, 'w', ['plain'], 10))).toEqual(ids);
  });
});

/** Backends of this database waiting for a lock. */
async function lockWaiters(client: Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0].n;
}

import { Client } from 'pg';
import { createTestDatabase, TestDatabase } from '../support/database';
import { claim, connect, countByStatus, idsOf } from './claim-job-batch.support';

const JOBS = 1_000;
const TYPES = ['email', 'report'];

describe('claim_job_batch: concurrent claimers (FOR UPDATE SKIP LOCKED)', () => {
  let db: TestDatabase;
  let clients: Client[] = [];
  let admin: Client;

  const open = async (): Promise<Client> => {
    const client = await connect(db.url);
    clients.push(client);
    return client;
  };

  /** All pending job ids, after seeding `JOBS` pending jobs with mixed types and priorities. */
  const seed = async (): Promise<number[]> => {
    await admin.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    const { rows } = await admin.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, priority, created_at)
       SELECT CASE WHEN g % 2 = 0 THEN 'email' ELSE 'report' END,
              100 + g % 7,
              now() - g * interval '1 second'
       FROM generate_series(1, $1::int) AS g
       RETURNING id`,
      [JOBS],
    );
    return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = await open();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    clients = [];
    await db?.drop();
  });

  it('two open transactions get disjoint batches that together cover every job, without waiting', async () => {
    const allIds = await seed();
    const [first, second] = [await open(), await open()];
    // A claimer that waited on the other's row locks would fail here instead of hanging.
    await second.query(`SET lock_timeout = '2s'`);

    try {
      await first.query('BEGIN');
      const firstRows = await claim(first, 'worker-1', TYPES, 600);
      expect(firstRows).toHaveLength(600);

      // `first` still holds its 600 row locks, uncommitted.
      await second.query('BEGIN');
      const secondRows = await claim(second, 'worker-2', TYPES, 600);
      expect(secondRows).toHaveLength(JOBS - 600);

      // While both are open, a third claimer finds nothing left to take.
      expect(await claim(admin, 'worker-3', TYPES, 600)).toEqual([]);

      const firstIds = idsOf(firstRows);
      const secondIds = idsOf(secondRows);
      expect(firstIds.filter((id) => secondIds.includes(id))).toEqual([]);
      expect([...firstIds, ...secondIds].sort((a, b) => a - b)).toEqual(allIds);

      await first.query('COMMIT');
      await second.query('COMMIT');
    } finally {
      await first.query('ROLLBACK').catch(() => undefined);
      await second.query('ROLLBACK').catch(() => undefined);
    }

    expect(await countByStatus(admin)).toEqual({ claimed: JOBS });
    const { rows } = await admin.query(
      `SELECT worker_id, count(*)::int AS jobs, min(attempts) AS min, max(attempts) AS max
       FROM job_queue.jobs GROUP BY worker_id ORDER BY worker_id`,
    );
    expect(rows).toEqual([
      { worker_id: 'worker-1', jobs: 600, min: 1, max: 1 },
      { worker_id: 'worker-2', jobs: 400, min: 1, max: 1 },
    ]);
  });

  it('8 connections claiming batches of 50 in parallel until empty claim every job exactly once', async () => {
    const allIds = await seed();
    const workers = await Promise.all(Array.from({ length: 8 }, () => open()));

    // Every worker holds its first batch open until all 8 have claimed one, so at least that
    // round is truly concurrent; after it they run free.
    let holding = 0;
    let releaseAll!: () => void;
    const allHold = new Promise<void>((resolve) => (releaseAll = resolve));
    const holdUntilAllHold = (): Promise<void> => {
      if (++holding === workers.length) releaseAll();
      return allHold;
    };

    const run = async (client: Client, index: number) => {
      const workerId = `worker-${index}`;
      const batches: number[][] = [];
      for (;;) {
        await client.query('BEGIN');
        try {
          const rows = await claim(client, workerId, TYPES, 50);
          if (batches.length === 0) await holdUntilAllHold();
          await client.query('COMMIT');
          if (rows.length === 0) return { workerId, batches };
          batches.push(idsOf(rows));
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      }
    };
    const results = await Promise.all(workers.map((client, index) => run(client, index + 1)));

    for (const { batches } of results) {
      expect(batches[0]).toHaveLength(50);
      for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(50);
    }
    const claimed = results.flatMap(({ batches }) => batches.flat());
    expect(claimed).toHaveLength(JOBS);
    expect(new Set(claimed).size).toBe(JOBS);
    expect([...claimed].sort((a, b) => a - b)).toEqual(allIds);

    // The table agrees: one claim each, by the worker that returned it.
    expect(await countByStatus(admin)).toEqual({ claimed: JOBS });
    const { rows } = await admin.query<{ worker_id: string; jobs: number; max: number }>(
      `SELECT worker_id, count(*)::int AS jobs, max(attempts) AS max FROM job_queue.jobs GROUP BY worker_id`,
    );
    expect(rows.every((row) => row.max === 1)).toBe(true);
    expect(Object.fromEntries(rows.map((row) => [row.worker_id, row.jobs]))).toEqual(
      Object.fromEntries(
        results
          .filter(({ batches }) => batches.length > 0)
          .map(({ workerId, batches }) => [workerId, batches.flat().length]),
      ),
    );
  });
});

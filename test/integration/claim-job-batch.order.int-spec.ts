import { claim, countByStatus, idsOf, useClaimTestDatabase } from './claim-job-batch.support';

const BASE = Date.parse('2026-01-01T00:00:00Z');

/**
 * Inserted in this order, with explicit ids, so neither insertion order nor id order matches the
 * claim order. Ties on (priority, created_at) are 10/12 and 4/9/11: only `id` can break them, and
 * the higher id of each tie is inserted first.
 */
const PENDING = [
  { id: 7, type: 'email', priority: 100, createdSec: 30 },
  { id: 12, type: 'report', priority: 200, createdSec: 50 },
  { id: 3, type: 'other', priority: 500, createdSec: 0 },
  { id: 11, type: 'email', priority: 100, createdSec: 10 },
  { id: 9, type: 'email', priority: 100, createdSec: 10 },
  { id: 5, type: 'email', priority: 200, createdSec: 60 },
  { id: 1, type: 'email', priority: 50, createdSec: 0 },
  { id: 8, type: 'report', priority: 100, createdSec: 20 },
  { id: 2, type: 'other', priority: 100, createdSec: 0 },
  { id: 10, type: 'email', priority: 200, createdSec: 50 },
  { id: 6, type: 'report', priority: -5, createdSec: 0 },
  { id: 4, type: 'report', priority: 100, createdSec: 10 },
];
/** Claimable types, highest priority, but not pending: never claimed. */
const NOT_PENDING = [
  { id: 13, status: 'completed' },
  { id: 14, status: 'claimed' },
  { id: 15, status: 'running' },
  { id: 16, status: 'failed' },
  { id: 17, status: 'cancelled' },
];

/** priority DESC, then created_at ASC, then id ASC, over the email and report jobs only. */
const EMAIL_AND_REPORT_ORDER = [10, 12, 5, 4, 9, 11, 8, 7, 1, 6];

describe('claim_job_batch: batch size, job types and order', () => {
  const db = useClaimTestDatabase();

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    for (const job of PENDING) {
      await db.client.query(
        `INSERT INTO job_queue.jobs (id, job_type, priority, created_at) VALUES ($1, $2, $3, $4)`,
        [job.id, job.type, job.priority, new Date(BASE + job.createdSec * 1000)],
      );
    }
    for (const job of NOT_PENDING) {
      await db.client.query(
        `INSERT INTO job_queue.jobs (id, job_type, priority, status, created_at) VALUES ($1, 'email', 1000, $2, $3)`,
        [job.id, job.status, new Date(BASE)],
      );
    }
  });

  it('hands out jobs in priority DESC, created_at ASC, id ASC order across successive claims', async () => {
    const batches: number[][] = [];
    for (let i = 0; i < 5; i++) {
      batches.push(idsOf(await claim(db.client, 'worker-1', ['email', 'report'], 3)));
    }

    expect(batches).toEqual([[10, 12, 5], [4, 9, 11], [8, 7, 1], [6], []]);
    expect(batches.flat()).toEqual(EMAIL_AND_REPORT_ORDER);
  });

  it('returns at most p_batch_size rows', async () => {
    for (const size of [1, 2, 4]) {
      await db.client.query(
        `UPDATE job_queue.jobs SET status = 'pending', attempts = 0 WHERE id <= 12`,
      );
      const rows = await claim(db.client, 'worker-1', ['email', 'report'], size);
      expect(idsOf(rows)).toEqual(EMAIL_AND_REPORT_ORDER.slice(0, size));
    }
    // More than there is: everything claimable, and no more.
    await db.client.query(
      `UPDATE job_queue.jobs SET status = 'pending', attempts = 0 WHERE id <= 12`,
    );
    const all = await claim(db.client, 'worker-1', ['email', 'report'], 1000);
    expect(idsOf(all)).toEqual(EMAIL_AND_REPORT_ORDER);
  });

  it('claims only jobs of the given types', async () => {
    const reports = await claim(db.client, 'worker-1', ['report'], 100);
    expect(idsOf(reports)).toEqual([12, 4, 8, 6]);
    expect(new Set(reports.map((row) => row.job_type))).toEqual(new Set(['report']));

    // The type with the highest-priority pending job was never asked for until now.
    const others = await claim(db.client, 'worker-1', ['other'], 100);
    expect(idsOf(others)).toEqual([3, 2]);

    const unknown = await claim(db.client, 'worker-1', ['no-such-type'], 100);
    expect(unknown).toEqual([]);

    const emails = await claim(db.client, 'worker-1', ['email'], 100);
    expect(idsOf(emails)).toEqual([10, 5, 9, 11, 7, 1]);
    expect(new Set(emails.map((row) => row.job_type))).toEqual(new Set(['email']));
  });

  it('never claims a job that is not pending', async () => {
    const rows = await claim(db.client, 'worker-1', ['email', 'report', 'other'], 1000);

    expect(idsOf(rows).filter((id) => id > 12)).toEqual([]);
    expect(rows).toHaveLength(PENDING.length);
    const { rows: untouched } = await db.client.query(
      `SELECT id::int, status, attempts, worker_id FROM job_queue.jobs WHERE id > 12 ORDER BY id`,
    );
    expect(untouched).toEqual(
      NOT_PENDING.map((job) => ({ id: job.id, status: job.status, attempts: 0, worker_id: null })),
    );
    expect(await countByStatus(db.client)).toEqual({
      claimed: PENDING.length + 1,
      running: 1,
      completed: 1,
      failed: 1,
      cancelled: 1,
    });
  });
});

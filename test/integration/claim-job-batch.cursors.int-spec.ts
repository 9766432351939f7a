import { CURRENT_CLAIM_JOB_BATCH_QUERY } from '../../libs/job-queue/src/sql/functions/current-functions';
import {
  blocksOf,
  explainAnalyze,
  functionSettings,
  JsonPlanNode,
  nodesOf,
} from '../support/json-plan';
import {
  claim,
  claimAfter,
  ClaimCursor,
  claimParameters,
  connect,
  idsOf,
  useClaimTestDatabase,
} from './claim-job-batch.support';

const BASE = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(BASE + seconds * 1000);

/** email at priority 100 created 1..10 s (ids 1..10), one email at 200, report at 100. */
const PENDING = [
  ...Array.from({ length: 10 }, (_, i) => ({ id: i + 1, type: 'email', priority: 100, sec: i })),
  { id: 11, type: 'email', priority: 200, sec: 5 },
  { id: 12, type: 'report', priority: 100, sec: 0.5 },
  { id: 13, type: 'report', priority: 100, sec: 4.5 },
  { id: 14, type: 'report', priority: 100, sec: 8.5 },
];

/** The cursor a claim that ended at email job `id` (priority 100) leaves. */
const afterEmail = (id: number): ClaimCursor => ({
  jobType: 'email',
  priority: 100,
  createdAt: at(id - 1),
  id,
});

/**
 * A claim resumes each type and priority after the caller's cursor, reads every priority with no
 * cursor from its head, and keeps one priority order across types.
 */
describe('claim_job_batch: resuming after cursors', () => {
  const db = useClaimTestDatabase();

  beforeEach(async () => {
    await db.client.query(`TRUNCATE job_queue.jobs, job_queue.job_events`);
    for (const job of PENDING) {
      await db.client.query(
        `INSERT INTO job_queue.jobs (id, job_type, priority, created_at) VALUES ($1, $2, $3, $4)`,
        [job.id, job.type, job.priority, at(job.sec)],
      );
    }
    await db.client.query('BEGIN'); // each test's claims are rolled back
  });

  afterEach(() => db.client.query('ROLLBACK'));

  it('takes what is after the cursor, a higher priority at once, and nothing behind it', async () => {
    expect(idsOf(await claimAfter(db.client, ['email'], 3, [afterEmail(4)]))).toEqual([11, 5, 6]);
  });

  it('without cursors, reads from the heads: the jobs behind a cursor come first', async () => {
    expect(idsOf(await claim(db.client, 'w', ['email'], 3))).toEqual([11, 1, 2]);
  });

  it('reads a priority between two cursors, and below the lowest, from its head', async () => {
    const cursors: ClaimCursor[] = [
      { jobType: 'email', priority: 200, createdAt: at(5), id: 11 },
      { jobType: 'email', priority: 50, createdAt: at(0), id: 1 },
    ];
    expect(idsOf(await claimAfter(db.client, ['email'], 3, cursors))).toEqual([1, 2, 3]);
    await db.client.query(
      `INSERT INTO job_queue.jobs (id, job_type, priority, created_at) VALUES (20, 'email', 10, $1)`,
      [at(0)],
    );
    expect(idsOf(await claimAfter(db.client, ['email'], 20, cursors))).toEqual([
      4, 5, 6, 7, 8, 9, 10, 20,
    ]);
  });

  it('keeps one priority order across types, each type after its own cursor', async () => {
    const claimed = await claimAfter(db.client, ['email', 'report'], 4, [afterEmail(4)]);
    expect(idsOf(claimed)).toEqual([11, 12, 5, 13]);
  });

  it('takes the lowest of two cursors for one type and priority, and ignores broken ones', async () => {
    const cursors: ClaimCursor[] = [
      afterEmail(4),
      afterEmail(2),
      { jobType: 'other', priority: 100, createdAt: at(100), id: 99 }, // a type not claimed
    ];
    expect(idsOf(await claimAfter(db.client, ['email'], 3, cursors))).toEqual([11, 3, 4]);
    // NULL elements are not cursors: the type is read from its head.
    const { rows } = await db.client.query(
      `SELECT id FROM job_queue.claim_job_batch('w', ARRAY['report'], 2,
         p_after_job_types => ARRAY['report', NULL], p_after_priorities => ARRAY[NULL, 100],
         p_after_created_at => ARRAY[now(), now()], p_after_ids => ARRAY[1, NULL]::bigint[])`,
    );
    expect(rows.map((row) => Number(row.id))).toEqual([12, 13]);
  });

  it('takes cursors at either end of the priority range without overflowing', async () => {
    await db.client.query(
      `INSERT INTO job_queue.jobs (id, job_type, priority, created_at)
       VALUES (30, 'edge', 2147483647, $1), (31, 'edge', 2147483647, $2),
              (32, 'edge', -2147483648, $1), (33, 'edge', -2147483648, $2)`,
      [at(0), at(1)],
    );
    const cursors: ClaimCursor[] = [
      { jobType: 'edge', priority: 2147483647, createdAt: at(0), id: 30 },
      { jobType: 'edge', priority: -2147483648, createdAt: at(0), id: 32 },
    ];
    expect(idsOf(await claimAfter(db.client, ['edge'], 10, cursors))).toEqual([31, 33]);
  });
});

/**
 * The point of the cursors: while another session holds a snapshot, the entries of jobs claimed
 * since stay in `jobs_claim_idx` (VACUUM may not remove them), and a claim from the head checks
 * every one of them; a claim after its cursor does not read them.
 */
/** Blocks the scans of `jobs_claim_idx` touched: the index and the rows its entries point to. */
const claimIndexBlocks = (plan: JsonPlanNode): number =>
  [...nodesOf(plan)]
    .filter((node) => node['Index Name'] === 'jobs_claim_idx')
    .reduce((sum, node) => sum + blocksOf(node), 0);

describe('claim_job_batch: dead entries while a snapshot is held', () => {
  const db = useClaimTestDatabase();
  const DEAD = 20_000;

  it('a claim of 10 after its cursor reads a few blocks; from the head, every dead entry', async () => {
    await db.client.query(
      `INSERT INTO job_queue.jobs (job_type, created_at)
       SELECT 'busy', $1::timestamptz + g * interval '1 ms' FROM generate_series(1, $2::int) g`,
      [at(0), DEAD + 100],
    );
    await db.client.query(`VACUUM ANALYZE job_queue.jobs`);
    const holder = await connect(db.database.url);
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT pg_catalog.txid_current(), count(*) FROM job_queue.jobs');
      // As claims leave them: the first DEAD jobs are no longer pending, their entries dead.
      await db.client.query(
        `UPDATE job_queue.jobs SET status = 'completed', completed_at = now() WHERE id <= $1`,
        [DEAD],
      );
      await db.client.query(`VACUUM job_queue.jobs`); // removes nothing the holder may still see
      const { rows } = await db.client.query<{ created_at: string; id: string }>(
        `SELECT created_at::text, id FROM job_queue.jobs WHERE id = $1`,
        [DEAD],
      );
      const cursor: ClaimCursor = {
        jobType: 'busy',
        priority: 100,
        createdAt: rows[0].created_at,
        id: rows[0].id,
      };
      const settings = await functionSettings(db.client, 'job_queue.claim_job_batch');
      const claimPlan = (cursors: ClaimCursor[]) =>
        explainAnalyze(
          db.client,
          CURRENT_CLAIM_JOB_BATCH_QUERY,
          claimParameters(['busy'], 10, null, cursors),
          settings,
        );
      const fromHead = await claimPlan([]);
      const afterCursor = await claimPlan([cursor]);
      for (const plan of [fromHead, afterCursor]) expect(plan['Actual Rows']).toBe(10);
      // After the cursor: the ten rows' index and heap pages. From the head: each dead entry's
      // row is read to learn it is dead, hundreds of pages (blocks, not time: timings are the
      // bench's, `npm run bench -- --held-snapshot`).
      expect(claimIndexBlocks(afterCursor)).toBeLessThan(30);
      expect(claimIndexBlocks(fromHead)).toBeGreaterThan(10 * claimIndexBlocks(afterCursor));
      // The rest of the claim (the UPDATE and its index entries) is the same either way.
      expect(blocksOf(fromHead) - claimIndexBlocks(fromHead)).toBeLessThan(
        blocksOf(afterCursor) - claimIndexBlocks(afterCursor) + 20,
      );
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });
});

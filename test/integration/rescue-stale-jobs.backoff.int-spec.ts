import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { rescueStaleJobs } from '../../libs/job-queue/src/sql/rescue-stale-jobs.query';
import { retryDelayMs } from '../../libs/job-queue/src/retry/retry-policy';
import { useQueueTestingModule } from '../support/test-app';

const POLICY = { baseDelayMs: 1_000, maxDelayMs: 20_000, jitter: 0.25 };
const EXACT = { baseDelayMs: 700, maxDelayMs: 50_000, jitter: 0 };
const FALLBACK = { maxAttempts: 4, baseDelayMs: 300, maxDelayMs: 1_000, jitter: 0 };
const ATTEMPTS = [1, 2, 3, 4, 5, 6, 8, 40];
const SAMPLES = 20;

interface Rescued {
  attempts: number;
  status: string;
  /** run_at minus the rescue's now() (its updated_at), in ms. */
  delay_ms: number;
}

/**
 * The reaper computes a rescued attempt's backoff in SQL from the row's policy; the worker's
 * failure path computes it in TypeScript (`retryDelayMs`). Both must give the same delay, up to
 * the jitter (each draws its own random number).
 */
describe('rescueStaleJobs: the backoff of a rescued attempt', () => {
  const app = useQueueTestingModule();

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  /** Held rows whose lease expired an hour ago, `SAMPLES` per attempt count, with `policy`. */
  async function staleRows(
    policy: { baseDelayMs: number; maxDelayMs: number; jitter: number } | null,
    maxAttempts: number | null,
  ): Promise<void> {
    await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, worker_id, attempts, max_attempts, run_token,
                         backoff_base_ms, backoff_max_ms, backoff_jitter, claimed_at, heartbeat_at)
       SELECT 'stale', 'running', 'gone', a, $2, a, $3, $4, $5,
              now() - interval '1 hour', now() - interval '1 hour'
       FROM unnest($1::int[]) AS a, generate_series(1, $6::int)`,
      [
        ATTEMPTS,
        maxAttempts,
        policy?.baseDelayMs ?? null,
        policy?.maxDelayMs ?? null,
        policy?.jitter ?? null,
        SAMPLES,
      ],
    );
  }

  async function rescue(): Promise<Rescued[]> {
    const rescued = await rescueStaleJobs(app.dataSource, DEFAULT_SCHEMA, 60_000, FALLBACK);
    expect(rescued).toHaveLength(ATTEMPTS.length * SAMPLES);
    return app.dataSource.query(
      `SELECT attempts, status,
              (extract(epoch FROM run_at - updated_at) * 1000)::float8 AS delay_ms
       FROM job_queue.jobs ORDER BY attempts, id`,
    );
  }

  it('agrees with retryDelayMs within the jitter, for every attempt, and spreads', async () => {
    await staleRows(POLICY, 100);
    const rows = await rescue();
    for (const attempt of ATTEMPTS) {
      const delays = rows.filter((row) => row.attempts === attempt).map((row) => row.delay_ms);
      const lowest = retryDelayMs(attempt, POLICY, () => 0);
      const highest = retryDelayMs(attempt, POLICY, () => 1);
      for (const delay of delays) {
        expect(delay).toBeGreaterThanOrEqual(lowest - 1);
        expect(delay).toBeLessThanOrEqual(highest + 1);
      }
      // Jittered: twenty draws are not all one value.
      expect(new Set(delays).size).toBeGreaterThan(1);
    }
    // Each backs off: scheduled until its run_at (pending only when the delay came out 0).
    expect(rows.every((row) => row.status === (row.delay_ms > 0 ? 'scheduled' : 'pending'))).toBe(
      true,
    );
  });

  it('equals retryDelayMs exactly without jitter, the cap included', async () => {
    await staleRows(EXACT, 100);
    const rows = await rescue();
    for (const row of rows) expect(row.delay_ms).toBe(retryDelayMs(row.attempts, EXACT));
  });

  it('fails the attempts that were the row’s last, at once', async () => {
    await staleRows(POLICY, 5);
    const rows = await rescue();
    for (const row of rows) {
      expect(row.status).toBe(row.attempts >= 5 ? 'failed' : 'scheduled');
      if (row.status === 'failed') expect(row.delay_ms).toBe(0);
    }
  });

  it('applies the fallback to a row without a policy of its own (never claimed by a worker)', async () => {
    await staleRows(null, null);
    const rows = await rescue();
    for (const row of rows) {
      expect(row.status).toBe(row.attempts >= FALLBACK.maxAttempts ? 'failed' : 'scheduled');
      if (row.status === 'scheduled') {
        expect(row.delay_ms).toBe(retryDelayMs(row.attempts, FALLBACK));
      }
    }
  });
});

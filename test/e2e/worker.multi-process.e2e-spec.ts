import { EnqueueManyItem } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { CREATE_JOB_RUNS_TABLE } from '../support/child-workers';
import { useWorkerFleet } from '../support/worker-fleet';

const JOB_COUNT = 5_000;
const JOB_TYPES = ['alpha', 'beta', 'slow'] as const;
const WORKER_IDS = ['mp-worker-1', 'mp-worker-2', 'mp-worker-3'];
const BOOT_DEADLINE_MS = 30_000;
const DRAIN_DEADLINE_MS = 40_000;

/**
 * Three worker processes share one database: 5,000 jobs enqueued by this (enqueue-only) process
 * all complete, each exactly once, and every worker takes part.
 */
describe('worker across processes', () => {
  // Every worker claims and listens before the first job exists.
  const fleet = useWorkerFleet({
    setup: [CREATE_JOB_RUNS_TABLE],
    workers: (databaseUrl) =>
      WORKER_IDS.map((workerId) => ({ databaseUrl, workerId, concurrency: 10 })),
    bootDeadlineMs: BOOT_DEADLINE_MS,
  });

  it('completes 5,000 jobs over 3 types exactly once each, on all 3 workers', async () => {
    const { queue, dataSource, workers } = fleet;
    const items: EnqueueManyItem<{ n: number }>[] = Array.from({ length: JOB_COUNT }, (_, n) => ({
      type: JOB_TYPES[n % JOB_TYPES.length],
      data: { n },
    }));
    const startedAt = Date.now();
    const jobs = await queue.enqueueMany(items);
    expect(jobs).toHaveLength(JOB_COUNT);

    await waitFor(
      async () => {
        const [{ done }] = await dataSource.query(
          `SELECT count(*)::int AS done FROM job_queue.jobs WHERE status IN ('completed', 'failed', 'cancelled')`,
        );
        return done === JOB_COUNT;
      },
      { timeoutMs: DRAIN_DEADLINE_MS, intervalMs: 100, description: `${JOB_COUNT} finished jobs` },
    );
    const drainMs = Date.now() - startedAt;
    console.log(
      `${JOB_COUNT} jobs drained by ${WORKER_IDS.length} worker processes in ${drainMs} ms`,
    );

    const byStatus: Array<{ status: string; count: number }> = await dataSource.query(
      `SELECT status, count(*)::int AS count FROM job_queue.jobs GROUP BY status`,
    );
    expect(byStatus).toEqual([{ status: 'completed', count: JOB_COUNT }]);

    // job_runs holds one row per attempt: exactly one per job, for exactly our jobs.
    const [runs] = await dataSource.query(
      `SELECT count(*)::int AS rows, count(DISTINCT job_id)::int AS jobs FROM job_runs`,
    );
    expect(runs).toEqual({ rows: JOB_COUNT, jobs: JOB_COUNT });
    const mismatched = await dataSource.query(
      `SELECT j.id, r.job_id FROM job_queue.jobs j FULL JOIN job_runs r ON r.job_id = j.id
       WHERE j.id IS NULL OR r.job_id IS NULL
          OR j.attempts <> 1 OR r.attempt <> 1 OR r.worker_id IS DISTINCT FROM j.worker_id
          OR j.result->>'by' IS DISTINCT FROM r.worker_id
       LIMIT 5`,
    );
    expect(mismatched).toEqual([]);
    expect(new Set(jobs.map((job) => job.id)).size).toBe(JOB_COUNT);

    const perWorker: Array<{ worker_id: string; runs: number }> = await dataSource.query(
      `SELECT worker_id, count(*)::int AS runs FROM job_runs GROUP BY worker_id ORDER BY worker_id`,
    );
    console.log(
      `runs per worker: ${perWorker.map((row) => `${row.worker_id}=${row.runs}`).join(', ')}`,
    );
    expect(perWorker.map((row) => row.worker_id)).toEqual(WORKER_IDS);
    for (const row of perWorker) expect(row.runs).toBeGreaterThan(0);

    // SIGTERM: each worker closes cleanly and exits 0, holding nothing.
    const exits = await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
    expect(exits).toEqual(WORKER_IDS.map(() => ({ code: 0, signal: null })));
    const [{ held }] = await dataSource.query(
      `SELECT count(*)::int AS held FROM job_queue.jobs WHERE status IN ('pending', 'claimed', 'running')`,
    );
    expect(held).toBe(0);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ChildWorkers, CREATE_JOB_RUNS_TABLE, WorkerProcessConfig } from '../support/child-workers';

const STALE_AFTER_MS = 3_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
const HELD = 5;

interface RunRow {
  job_id: string;
  worker_id: string;
  run_token: number;
}

/**
 * A worker whose event loop is blocked while it holds prefetched jobs: their leases lapse, a
 * second worker's reaper takes them back and runs them. When the first worker's loop runs again
 * it must not start its copies (their handlers would run twice): a held job starts only while
 * its lease is current.
 */
describe('worker: a held job never starts after its lease is gone', () => {
  const children = new ChildWorkers();
  let db: TestDatabase;
  let producer: QueueTestingModule;
  let queue: QueueService;
  let dataSource: DataSource;
  let folder: string;

  const config = (workerId: string, extra: Partial<WorkerProcessConfig>): WorkerProcessConfig => ({
    databaseUrl: db.url,
    workerId,
    pollIntervalMs: 100,
    staleAfterMs: STALE_AFTER_MS,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    reaperIntervalMs: 200,
    ...extra,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    producer = await createQueueTestingModule({ url: db.url });
    ({ queue, dataSource } = producer);
    await dataSource.query(CREATE_JOB_RUNS_TABLE);
    folder = await mkdtemp(join(tmpdir(), 'held-lease-'));
  });

  afterAll(async () => {
    await children.killAll();
    await producer?.close();
    await db?.drop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  const runsOf = (ids: string[]): Promise<RunRow[]> =>
    dataSource.query(
      `SELECT job_id::text, worker_id, run_token FROM job_runs
       WHERE job_id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );

  it('the rescued held jobs start once, on the worker that rescued them only', async () => {
    const unblock = join(folder, 'unblock');
    const [blocking] = await queue.enqueueMany([{ type: 'blocking', data: {}, priority: 200 }]);
    const held = (
      await queue.enqueueMany(
        Array.from({ length: HELD }, (_, i) => ({ type: 'alpha', data: { i } })),
      )
    ).map((job) => job.id);

    // A: one slot, five held; its one running handler blocks the whole process.
    const a = children.spawn(
      config('lease-a', { concurrency: 1, prefetch: HELD, blockUntilFile: unblock }),
    );
    await a.waitUntilReady();
    await waitFor(
      async () =>
        Number(
          (
            await dataSource.query(
              `SELECT count(*) AS n FROM job_queue.jobs WHERE worker_id = 'lease-a'
                 AND status = 'running'`,
            )
          )[0].n,
        ) ===
          HELD + 1 && (await runsOf([blocking.id])).length === 1,
      { description: 'worker A to hold the blocking job and five prefetched ones, blocked' },
    );

    // B: takes them back once A's leases are stale, and runs the held ones.
    children.spawn(config('lease-b', { concurrency: 5, jobTypes: ['alpha'] }));
    await waitFor(
      async () => {
        const jobs = await Promise.all(held.map((id) => queue.getJob(id)));
        return jobs.every((job) => job?.status === 'completed');
      },
      { description: 'worker B to rescue and complete the five held jobs', timeoutMs: 45_000 },
    );

    // A runs again: its copies must be handed back unstarted, not run.
    await writeFile(unblock, '');
    await a.stop('SIGTERM');

    const runs = await runsOf(held);
    expect(runs).toHaveLength(HELD);
    expect(runs.every((run) => run.worker_id === 'lease-b')).toBe(true);
    expect(new Set(runs.map((run) => run.job_id))).toEqual(new Set(held));
    expect(a.outputTail()).toMatch(/held job\(s\) back unstarted: their lease lapsed/);
  }, 90_000);
});

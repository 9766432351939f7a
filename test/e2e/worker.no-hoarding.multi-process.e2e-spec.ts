import { DataSource } from 'typeorm';
import { QueueService } from 'nest-pg-job-queue';
import { ChildWorkers, CREATE_JOB_RUNS_TABLE, WorkerProcessConfig } from '../support/child-workers';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const SHORT = 10;

/**
 * Worker A's two slots are busy with long jobs and it holds ten short ones ahead of its slots
 * (`prefetch`); worker B is idle. A hands the short jobs back once they have waited a second for
 * a slot, and claims no more ahead of its slots while none frees: every short job runs on B.
 * A's long jobs run until their signal aborts, so no slot of A frees during the test, however
 * long B takes to boot on a loaded machine: were the short jobs not handed back, they would
 * never complete.
 */
describe('worker: held jobs are handed back when no slot frees for them', () => {
  const children = new ChildWorkers();
  let db: TestDatabase;
  let producer: QueueTestingModule;
  let queue: QueueService;
  let dataSource: DataSource;

  const config = (workerId: string, extra: Partial<WorkerProcessConfig>): WorkerProcessConfig => ({
    databaseUrl: db.url,
    workerId,
    pollIntervalMs: 200,
    ...extra,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    producer = await createQueueTestingModule({ url: db.url });
    ({ queue, dataSource } = producer);
    await dataSource.query(CREATE_JOB_RUNS_TABLE);
  });

  afterAll(async () => {
    await children.killAll();
    await producer?.close();
    await db?.drop();
  });

  it('every short job runs on the idle worker while the long jobs hold every slot of the busy one', async () => {
    const long = await queue.enqueueMany(
      [0, 1].map((i) => ({ type: 'slow', data: { i }, priority: 200 })),
    );
    const short = await queue.enqueueMany(
      Array.from({ length: SHORT }, (_, i) => ({ type: 'alpha', data: { i } })),
    );
    const shortIds = short.map((job) => job.id);
    /** How many of the short jobs are in the state `where` says (a constant of this test). */
    const shortJobs = async (where: string): Promise<number> =>
      (
        await dataSource.query(
          `SELECT count(*)::int AS n FROM job_queue.jobs WHERE id = ANY($1::bigint[]) AND ${where}`,
          [shortIds],
        )
      )[0].n;

    const a = children.spawn(
      config('hoard-a', { concurrency: 2, prefetch: SHORT, slowMs: 'until-aborted' }),
    );
    await a.waitUntilReady();
    // A holds every short job: claimed (running, leased to A) with no slot to start in.
    await waitFor(async () => (await shortJobs(`worker_id = 'hoard-a'`)) === SHORT, {
      description: 'worker A to hold every short job',
    });
    const b = children.spawn(config('hoard-b', { concurrency: 4 }));
    await b.waitUntilReady();

    await waitFor(async () => (await shortJobs(`status = 'completed'`)) === SHORT, {
      description: 'every short job to complete',
      timeoutMs: 20_000,
    });
    const runs: Array<{ worker_id: string }> = await dataSource.query(
      `SELECT worker_id FROM job_runs WHERE job_id = ANY($1::bigint[])`,
      [shortIds],
    );
    expect(runs).toHaveLength(SHORT); // each ran once, none on A
    expect(new Set(runs.map((run) => run.worker_id))).toEqual(new Set(['hoard-b']));
    // A's slots never freed: its long jobs still run.
    const longJobs = await dataSource.query(
      `SELECT status, worker_id FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
      [long.map((job) => job.id)],
    );
    expect(longJobs).toEqual([
      { status: 'running', worker_id: 'hoard-a' },
      { status: 'running', worker_id: 'hoard-a' },
    ]);
    // The short jobs were handed back unstarted, their attempt given back: one attempt each.
    const attempts = await dataSource.query(
      `SELECT DISTINCT attempts FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
      [shortIds],
    );
    expect(attempts).toEqual([{ attempts: 1 }]);
    expect(a.outputTail()).toMatch(/Handed 10 held job\(s\) back unstarted: no slot freed within/);
  });
});

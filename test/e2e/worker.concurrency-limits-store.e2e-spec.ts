import { JobStatus } from 'nest-pg-job-queue';
import {
  GLOBAL_JOB,
  KEYED_JOB,
  LimitsFirstHandlers,
  LimitsRaisedHandlers,
  LimitsRemovedHandlers,
  ORDERED_JOB,
  PLAIN_JOB,
} from '../fixtures/concurrency-limits.handlers';
import { CapturingLogger, LogLine } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

interface LimitsRow {
  job_type: string;
  concurrency_per_key: number | null;
  global_concurrency: number | null;
  ordered_keys: boolean;
  /** As text: microseconds, which a Date would round away. */
  limits_updated_at: string | null;
  updated_at: string;
  paused_at: string | null;
}

const TYPES = [GLOBAL_JOB, KEYED_JOB, ORDERED_JOB, PLAIN_JOB];

/**
 * The handlers' concurrency limits are stored in `job_types` when a worker starts, before it
 * claims: each later boot with other limits overwrites them and says so once per type, one with
 * the same limits writes nothing, and removing a type's per-key limit moves its waiting jobs back
 * to `pending` (the trigger that frees a key's slots does nothing without one). The tests run in
 * order, as successive deployments of one app.
 */
describe('worker: concurrency limits stored at start', () => {
  const file = useWorkerTestFile();
  let observer: WorkerApp;

  beforeAll(async () => {
    observer = await file.start({ queueOptions: { worker: false } });
  });

  async function storedLimits(): Promise<Map<string, LimitsRow>> {
    const rows: LimitsRow[] = await observer.dataSource.query(
      `SELECT job_type, concurrency_per_key, global_concurrency, ordered_keys,
              limits_updated_at::text AS limits_updated_at, updated_at::text AS updated_at,
              paused_at::text AS paused_at
       FROM job_queue.job_types WHERE job_type = ANY ($1::text[]) ORDER BY job_type`,
      [TYPES],
    );
    return new Map(rows.map((row) => [row.job_type, row]));
  }

  /** Boots a worker with `handlers`, and returns it with what it logged of the limits. */
  async function boot(handlers: new () => unknown): Promise<{ app: WorkerApp; said: LogLine[] }> {
    const logger = new CapturingLogger();
    const app = await file.start({
      queueOptions: { worker: { pollIntervalMs: 20 } },
      providers: [handlers],
      logger,
    });
    return { app, said: logger.matching(/concurrency limits/) };
  }

  const limitsOf = (row: LimitsRow | undefined) => ({
    perKey: row?.concurrency_per_key,
    global: row?.global_concurrency,
    ordered: row?.ordered_keys,
  });

  let first: Map<string, LimitsRow>;

  it('stores each handler’s limits at the first boot, and logs the types that have any', async () => {
    const { app, said } = await boot(LimitsFirstHandlers);
    await app.close();

    first = await storedLimits();
    expect(limitsOf(first.get(KEYED_JOB))).toEqual({ perKey: 2, global: null, ordered: false });
    expect(limitsOf(first.get(GLOBAL_JOB))).toEqual({ perKey: null, global: 3, ordered: false });
    expect(limitsOf(first.get(ORDERED_JOB))).toEqual({ perKey: 1, global: null, ordered: true });
    // A type without limits is stored too: none, said by the row, not by a missing row.
    expect(limitsOf(first.get(PLAIN_JOB))).toEqual({ perKey: null, global: null, ordered: false });
    for (const type of TYPES) expect(first.get(type)?.limits_updated_at).not.toBeNull();

    expect(said.map((line) => [line.level, line.context, line.message]).sort()).toEqual([
      [
        'log',
        'JobQueue',
        `Job type ${GLOBAL_JOB}: concurrency limits changed from none to ` +
          '{globalConcurrency: 3} (the last worker to start decides)',
      ],
      [
        'log',
        'JobQueue',
        `Job type ${KEYED_JOB}: concurrency limits changed from none to ` +
          '{concurrencyPerKey: 2} (the last worker to start decides)',
      ],
      [
        'log',
        'JobQueue',
        `Job type ${ORDERED_JOB}: concurrency limits changed from none to ` +
          '{concurrencyPerKey: 1, ordered: true} (the last worker to start decides)',
      ],
    ]);
  });

  it('writes nothing and logs nothing at a boot with the same limits', async () => {
    const { app, said } = await boot(LimitsFirstHandlers);
    await app.close();

    expect(said).toEqual([]);
    const again = await storedLimits();
    for (const type of TYPES) {
      expect(again.get(type)).toEqual(first.get(type));
    }
  });

  it('overwrites the limits a later boot changes, leaving the row’s other settings, and logs each change once', async () => {
    await observer.queue.pause(GLOBAL_JOB);
    const paused = (await storedLimits()).get(GLOBAL_JOB)!;
    expect(paused.paused_at).not.toBeNull();

    const { app, said } = await boot(LimitsRaisedHandlers);
    await app.close();

    const raised = await storedLimits();
    expect(limitsOf(raised.get(KEYED_JOB))).toEqual({ perKey: 5, global: null, ordered: false });
    expect(limitsOf(raised.get(ORDERED_JOB))).toEqual({ perKey: 1, global: null, ordered: false });
    for (const type of [KEYED_JOB, ORDERED_JOB]) {
      expect(raised.get(type)!.limits_updated_at! > first.get(type)!.limits_updated_at!).toBe(true);
    }
    // Unchanged types are not written; the pause set meanwhile stays.
    expect(raised.get(GLOBAL_JOB)).toEqual(paused);
    expect(raised.get(PLAIN_JOB)).toEqual(first.get(PLAIN_JOB));

    expect(said.map((line) => line.message).sort()).toEqual([
      `Job type ${KEYED_JOB}: concurrency limits changed from {concurrencyPerKey: 2} to ` +
        '{concurrencyPerKey: 5} (the last worker to start decides)',
      `Job type ${ORDERED_JOB}: concurrency limits changed from ` +
        '{concurrencyPerKey: 1, ordered: true} to {concurrencyPerKey: 1} ' +
        '(the last worker to start decides)',
    ]);
    await observer.queue.resume(GLOBAL_JOB);
  });

  it('moves the waiting jobs of a type whose per-key limit is removed back to pending, and they run', async () => {
    const keyed = await observer.queue.enqueueMany(
      [1, 2, 3].map((n) => ({ type: KEYED_JOB, data: { n } })),
    );
    const ordered = await observer.queue.enqueue(ORDERED_JOB, {});
    // As claims set them aside: their key was at its limit. No worker runs meanwhile.
    await observer.dataSource.query(
      `UPDATE job_queue.jobs SET status = 'waiting', concurrency_key = 'k' WHERE id = ANY ($1::bigint[])`,
      [[...keyed.map((job) => job.id), ordered.id]],
    );

    const { app, said } = await boot(LimitsRemovedHandlers);

    expect(limitsOf((await storedLimits()).get(KEYED_JOB))).toEqual({
      perKey: null,
      global: null,
      ordered: false,
    });
    expect(said.map((line) => line.message)).toEqual([
      `Job type ${KEYED_JOB}: concurrency limits changed from {concurrencyPerKey: 5} to none ` +
        '(the last worker to start decides); 3 waiting job(s) moved back to pending',
    ]);
    // Moved before the worker's first claim: each runs now.
    await waitFor(
      async () => {
        const jobs = await Promise.all(keyed.map((job) => observer.queue.getJob(job.id)));
        return jobs.every((job) => job.status === JobStatus.Completed);
      },
      { description: 'the keyed jobs to complete' },
    );
    expect(app.app.get(LimitsRemovedHandlers).ran).toHaveLength(3);
    // A type that keeps its per-key limit keeps its waiting jobs: the trigger moves them.
    expect((await observer.queue.getJob(ordered.id)).status).toBe(JobStatus.Waiting);
    await app.close();
  });
});

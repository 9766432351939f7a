import { JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  ConcurrencyHandlers,
  FREE_JOB,
  LIMITED_CONCURRENCY,
  LIMITED_JOB,
} from '../fixtures/concurrency.handlers';

const GLOBAL_CONCURRENCY = 10;
const LIMITED_COUNT = 12;
const FREE_COUNT = 20;

describe('worker: concurrency limits', () => {
  let producer: WorkerApp;
  let worker: WorkerApp | undefined;
  let handlers: ConcurrencyHandlers | undefined;

  const file = useWorkerTestFile({
    beforeClose: async () => {
      handlers?.gate.open();
      await worker?.close();
    },
  });

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });

  async function runningCounts(): Promise<Record<string, number>> {
    const rows: Array<{ job_type: string; count: string }> = await producer.dataSource.query(
      `SELECT job_type, count(*) FROM job_queue.jobs WHERE status IN ('claimed', 'running') GROUP BY job_type`,
    );
    return Object.fromEntries(rows.map((row) => [row.job_type, Number(row.count)]));
  }

  it(`runs at most ${LIMITED_CONCURRENCY} jobs of a type limited to ${LIMITED_CONCURRENCY}, within the global ${GLOBAL_CONCURRENCY}`, async () => {
    // Enqueued before the worker starts, so its first claim sees them all. The limited jobs rank
    // first (priority 200): a worker ignoring the per-type limit would fill its slots with them.
    await producer.queue.enqueueMany([
      ...Array.from({ length: LIMITED_COUNT }, (_, i) => ({
        type: LIMITED_JOB,
        data: { i },
        priority: 200,
      })),
      ...Array.from({ length: FREE_COUNT }, (_, i) => ({ type: FREE_JOB, data: { i } })),
    ]);
    worker = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: { concurrency: GLOBAL_CONCURRENCY, pollIntervalMs: 20 } },
      providers: [ConcurrencyHandlers],
    });
    const probe = worker.app.get(ConcurrencyHandlers);
    handlers = probe;

    // With the gate shut, every slot fills: the limited type gets its 2 (a worker that let the
    // unlimited type claim first would leave it none while that type has a backlog), the rest
    // go to the other type.
    await waitFor(() => probe.inFlight.total === GLOBAL_CONCURRENCY, {
      description: 'every slot to be taken',
    });
    expect(probe.inFlight[LIMITED_JOB]).toBe(LIMITED_CONCURRENCY);
    expect(probe.inFlight[FREE_JOB]).toBe(GLOBAL_CONCURRENCY - LIMITED_CONCURRENCY);
    expect(await runningCounts()).toEqual({
      [LIMITED_JOB]: LIMITED_CONCURRENCY,
      [FREE_JOB]: GLOBAL_CONCURRENCY - LIMITED_CONCURRENCY,
    });

    probe.gate.open();
    await waitFor(() => probe.completed.length === LIMITED_COUNT + FREE_COUNT, {
      description: 'every job to run',
    });
    await waitFor(
      async () => {
        const stats = await producer.queue.stats({ maxAgeMs: 0 });
        return (
          stats[LIMITED_JOB]?.[JobStatus.Completed] === LIMITED_COUNT &&
          stats[FREE_JOB]?.[JobStatus.Completed] === FREE_COUNT
        );
      },
      { description: 'every job to be completed' },
    );
    expect(probe.maxInFlight[LIMITED_JOB]).toBe(LIMITED_CONCURRENCY);
    expect(probe.maxInFlight.total).toBe(GLOBAL_CONCURRENCY);
  });
});

import { Registry } from 'prom-client';
import { JobStatus } from 'nest-pg-job-queue';
import { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import { ConcurrencyHandlers, FREE_JOB } from '../fixtures/concurrency.handlers';
import { CapturingLogger } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { samplesOf } from '../support/prometheus-text';

/** No handler here: its jobs stay where the test puts them. */
const IDLE = 'metrics.idle';
const CONCURRENCY = 3;
/** Prometheus' default `scrape_timeout`: a scrape must end well within it. */
const SCRAPE_TIMEOUT_MS = 10_000;

describe('prometheus: gauges read at scrape time', () => {
  let handlers: ConcurrencyHandlers | undefined;
  const file = useWorkerTestFile({ beforeClose: () => handlers?.gate.open() });
  const registry = new Registry();
  let app: WorkerApp;

  const slots = async () => samplesOf(await registry.metrics(), 'job_queue_worker_slots');

  beforeAll(async () => {
    app = await file.start({
      queueOptions: { worker: { concurrency: CONCURRENCY, pollIntervalMs: 20 } },
      providers: [ConcurrencyHandlers],
      imports: [JobQueueMetricsModule.forRoot({ registry })],
    });
    handlers = app.app.get(ConcurrencyHandlers);
  });

  it("shows this worker's slots: busy while handlers run, free once they are done", async () => {
    expect(await slots()).toEqual({ 'state=busy': 0, 'state=free': CONCURRENCY });
    await app.queue.enqueueMany([
      { type: FREE_JOB, data: {} },
      { type: FREE_JOB, data: {} },
    ]);
    await waitFor(async () => (await slots())['state=busy'] === 2, {
      description: 'both gated handlers to run',
    });
    expect(await slots()).toEqual({ 'state=busy': 2, 'state=free': CONCURRENCY - 2 });

    handlers!.gate.open();
    await waitFor(async () => (await slots())['state=busy'] === 0, {
      description: 'both handlers to finish',
    });
    expect(await slots()).toEqual({ 'state=busy': 0, 'state=free': CONCURRENCY });
  });

  it('shows the counts of the stats snapshot, as the table has them once it is refreshed', async () => {
    const idle = await app.queue.enqueueMany([1, 2, 3].map(() => ({ type: IDLE, data: {} })));
    await app.queue.enqueue(IDLE, {}, { delayMs: 3_600_000 });
    await app.queue.cancel(idle[0].id);
    await app.dataSource.query(
      `UPDATE job_queue.jobs SET status = 'blocked', unfinished_dependencies = 1,
                                 on_dependency_failure = 'fail' WHERE id = $1`,
      [idle[1].id],
    );
    await waitFor(
      async () => {
        const [row] = await app.dataSource.query(
          `SELECT count(*)::int AS n FROM job_queue.jobs
           WHERE job_type = $1 AND status <> 'completed'`,
          [FREE_JOB],
        );
        return row.n === 0;
      },
      { description: 'the gated jobs to be written as completed' },
    );

    await app.queue.stats({ maxAgeMs: 0 }); // counts now, and stores the snapshot
    const rows: Array<{ job_type: string; status: string; n: number }> = await app.dataSource.query(
      `SELECT job_type, status, count(*)::int AS n FROM job_queue.jobs GROUP BY 1, 2`,
    );
    // Every status of a type that has jobs, zeros included.
    const expected: Record<string, number> = {};
    for (const type of new Set(rows.map((row) => row.job_type))) {
      for (const status of Object.values(JobStatus)) {
        const row = rows.find((found) => found.job_type === type && found.status === status);
        expected[`status=${status},type=${type}`] = row?.n ?? 0;
      }
    }
    expect(expected).toMatchObject({
      [`status=completed,type=${FREE_JOB}`]: 2,
      [`status=pending,type=${IDLE}`]: 1,
      [`status=blocked,type=${IDLE}`]: 1,
      [`status=scheduled,type=${IDLE}`]: 1,
      [`status=cancelled,type=${IDLE}`]: 1,
    });

    const text = await registry.metrics();
    expect(samplesOf(text, 'job_queue_jobs')).toEqual(expected);
    const [age] = Object.values(samplesOf(text, 'job_queue_jobs_snapshot_age_seconds'));
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
  });
});

describe('prometheus: a scrape while the database fails', () => {
  const file = useWorkerTestFile();
  const registry = new Registry();
  const logger = new CapturingLogger();
  let app: WorkerApp;

  beforeAll(async () => {
    app = await file.start({
      queueOptions: { worker: false },
      logger,
      imports: [JobQueueMetricsModule.forRoot({ registry })],
    });
    await app.queue.enqueue(IDLE, {});
    await app.queue.stats({ maxAgeMs: 0 });
  });

  afterEach(() => jest.restoreAllMocks());

  /** The scrape, and how long it took. */
  async function scrape(): Promise<{ text: string; ms: number }> {
    const startedAt = Date.now();
    const text = await registry.metrics();
    return { text, ms: Date.now() - startedAt };
  }

  it('shows the job gauges while the database answers (worker_slots: absent, no worker)', async () => {
    const { text } = await scrape();
    expect(samplesOf(text, 'job_queue_jobs')[`status=pending,type=${IDLE}`]).toBe(1);
    expect(text).not.toContain('job_queue_worker_slots');
  });

  it('leaves the job gauges empty when the read fails, and keeps the rest of the scrape', async () => {
    jest.spyOn(app.dataSource, 'query').mockRejectedValue(new Error('connection refused'));
    const { text } = await scrape();
    expect(samplesOf(text, 'job_queue_jobs')).toEqual({});
    expect(samplesOf(text, 'job_queue_jobs_snapshot_age_seconds')).toEqual({});
    expect(samplesOf(text, 'job_queue_jobs_enqueued_total')).toEqual({ [`type=${IDLE}`]: 1 });
    expect(logger.matching(/job stats snapshot failed \(connection refused\)/)).toHaveLength(1);
  });

  it('ends the scrape after a short timeout when the database does not answer', async () => {
    jest.spyOn(app.dataSource, 'query').mockReturnValue(new Promise(() => undefined));
    const { text, ms } = await scrape();
    expect(ms).toBeLessThan(SCRAPE_TIMEOUT_MS);
    expect(samplesOf(text, 'job_queue_jobs')).toEqual({});
    expect(samplesOf(text, 'job_queue_jobs_enqueued_total')).toEqual({ [`type=${IDLE}`]: 1 });
  });
});

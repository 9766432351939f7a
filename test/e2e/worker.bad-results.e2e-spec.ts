import { Job, JobStatus } from 'nest-pg-job-queue';
import { CapturingLogger } from '../support/capturing-logger';
import { waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BadResultHandlers,
  BIGINT_RESULT_JOB,
  CIRCULAR_RESULT_JOB,
  HEALTHY_RESULT_JOB,
  NUL_RESULT_JOB,
  RESULT_SECRET,
  SIZED_RESULT_JOB,
  SURROGATE_RESULT_JOB,
} from '../fixtures/bad-result.handlers';

const MAX_RESULT_BYTES = 64 * 1024;

describe('worker: a handler returning a value the jobs table cannot hold', () => {
  let worker: WorkerApp;
  const logs = new CapturingLogger();

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        // Room for a whole batch at once, so good and bad outcomes share one completion write.
        worker: { concurrency: 30, pollIntervalMs: 20 },
        maxResultBytes: MAX_RESULT_BYTES,
        shutdownTimeoutMs: 2_000,
      },
      providers: [BadResultHandlers],
      logger: logs,
    });
  });

  const finished = (id: string) => waitForJobToFinish(worker.queue, id);

  /** Fails the test if any line the library logged quotes a result. */
  const expectNoResultTextLogged = () => {
    expect(logs.lines.length).toBeGreaterThan(0); // the capture works: the worker said it started
    expect(logs.matching(new RegExp(RESULT_SECRET))).toEqual([]);
  };

  it.each([
    [BIGINT_RESULT_JOB, 1, /result\.total: a BigInt/],
    [CIRCULAR_RESULT_JOB, 2, /circular/i],
  ])(
    '%s: the attempt fails readably, retries as usual, and the result stays empty',
    async (type, attempts, reason) => {
      const witness = await worker.dataSource.query(
        `INSERT INTO job_queue.jobs (job_type, status) VALUES ('elsewhere', 'pending') RETURNING id`,
      );
      const job = await worker.queue.enqueue(type, {});
      const done: Job = await finished(job.id);
      expect(done.status).toBe(JobStatus.Failed);
      expect(done.attempts).toBe(attempts);
      expect(done.result).toBeNull();
      expect(done.lastError).toMatch(/^Handler result not stored: .*JSON-serialisable/);
      expect(done.lastError).toMatch(reason);
      // No other job was touched.
      expect(await worker.queue.getJob(String(witness[0].id))).toMatchObject({
        status: JobStatus.Pending,
        attempts: 0,
      });
    },
  );

  it('a NUL and a lone-surrogate result among 20 healthy jobs: the healthy ones complete, the two fail after their attempts', async () => {
    const healthy = await worker.queue.enqueueMany(
      Array.from({ length: 20 }, (_, i) => ({ type: HEALTHY_RESULT_JOB, data: { i } })),
    );
    const [nul, surrogate] = await worker.queue.enqueueMany([
      { type: NUL_RESULT_JOB, data: {} },
      { type: SURROGATE_RESULT_JOB, data: {} },
    ]);

    for (const job of healthy) {
      const done = await finished(job.id);
      expect(done).toMatchObject({ status: JobStatus.Completed, attempts: 1, lastError: null });
      expect(done.result).toEqual({ ok: true, id: job.id, note: RESULT_SECRET });
    }
    const [nulDone, surrogateDone] = [await finished(nul.id), await finished(surrogate.id)];
    for (const [done, path] of [
      [nulDone, /result\.note: a string with NUL or an unpaired surrogate/],
      [surrogateDone, /result\.items\[1\]: a string with NUL or an unpaired surrogate/],
    ] as const) {
      expect(done).toMatchObject({ status: JobStatus.Failed, attempts: 2, result: null });
      expect(done.lastError).toMatch(/^Handler result not stored: /);
      expect(done.lastError).toMatch(path);
      expect(done.lastError).not.toContain(RESULT_SECRET);
    }
    const held = await worker.dataSource.query(
      `SELECT id FROM job_queue.jobs WHERE status IN ('claimed', 'running')`,
    );
    expect(held).toEqual([]);
    expectNoResultTextLogged();
    expect(logs.matching(/Could not record/)).toEqual([]);
  });

  it('a result over maxResultBytes fails its attempt naming the option; one at the limit is stored', async () => {
    const [over, atLimit] = await worker.queue.enqueueMany([
      { type: SIZED_RESULT_JOB, data: { bytes: MAX_RESULT_BYTES + 1 } },
      { type: SIZED_RESULT_JOB, data: { bytes: MAX_RESULT_BYTES } },
    ]);
    const overDone = await finished(over.id);
    expect(overDone).toMatchObject({ status: JobStatus.Failed, attempts: 1, result: null });
    expect(overDone.lastError).toBe(
      `Handler result not stored: Invalid job result: ${MAX_RESULT_BYTES + 1} bytes of JSON. ` +
        `Expected at most ${MAX_RESULT_BYTES} bytes (maxResultBytes).`,
    );
    const atLimitDone = await finished(atLimit.id);
    expect(atLimitDone.status).toBe(JobStatus.Completed);
    expect(JSON.stringify(atLimitDone.result)).toHaveLength(MAX_RESULT_BYTES);
    expectNoResultTextLogged();
  });
});

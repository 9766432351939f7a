import { Job, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BadResultHandlers,
  BIGINT_RESULT_JOB,
  CIRCULAR_RESULT_JOB,
} from '../fixtures/bad-result.handlers';

describe('worker: a handler returning a value JSON cannot hold', () => {
  let worker: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 20 } },
      providers: [BadResultHandlers],
    });
  });

  const finished = (id: string) =>
    waitFor(async () => {
      const job = await worker.queue.getJob(id);
      return job.status === JobStatus.Failed || job.status === JobStatus.Completed
        ? job
        : undefined;
    });

  it.each([
    [BIGINT_RESULT_JOB, 1, /BigInt/],
    [CIRCULAR_RESULT_JOB, 2, /circular/i],
  ])(
    '%s: the attempt fails readably, retries as usual, and the result stays empty',
    async (type, attempts, reason) => {
      const witness = await worker.dataSource.query(
        `INSERT INTO jobs (job_type, status) VALUES ('elsewhere', 'pending') RETURNING id`,
      );
      const job = await worker.queue.enqueue(type, {});
      const done: Job = await finished(job.id);
      expect(done.status).toBe(JobStatus.Failed);
      expect(done.attempts).toBe(attempts);
      expect(done.result).toBeNull();
      expect(done.lastError).toMatch(/Handler result is not JSON-serialisable/);
      expect(done.lastError).toMatch(reason);
      // No other job was touched.
      expect(await worker.queue.getJob(String(witness[0].id))).toMatchObject({
        status: JobStatus.Pending,
        attempts: 0,
      });
    },
  );
});

import { JobStatus } from 'nest-pg-job-queue';
import { CapturingLogger } from '../support/capturing-logger';
import { QueryCounter } from '../support/query-counter';
import { waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BadResultHandlers,
  HEALTHY_RESULT_JOB,
  RESULT_SECRET,
} from '../fixtures/bad-result.handlers';

const CONSTRAINT = 'test_refuses_one_completion';

/**
 * A completion the database refuses although the queue's own checks passed it (here a CHECK
 * constraint of the app's; a trigger would do the same) costs that job its attempt, never the
 * outcomes written in the same statement, and is not retried forever.
 */
describe('worker: an outcome the database refuses', () => {
  let worker: WorkerApp;
  const logs = new CapturingLogger();
  const statements = new QueryCounter();
  /** Outcome writes (completions, failures, retries) sent so far. */
  const outcomeWrites = () => statements.queries.filter((sql) => /\bWITH o AS\b/.test(sql)).length;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 30, pollIntervalMs: 20 }, shutdownTimeoutMs: 2_000 },
      providers: [BadResultHandlers],
      logger: logs,
      queryLogger: statements,
    });
    await worker.dataSource.query(
      `ALTER TABLE job_queue.jobs ADD CONSTRAINT ${CONSTRAINT}
         CHECK (NOT (data ? 'refuse') OR status <> 'completed') NOT VALID`,
    );
  });

  const finished = (id: string) => waitForJobToFinish(worker.queue, id);

  it('lands the rest of the batch and records the offender as a failed attempt, readably', async () => {
    const jobs = await worker.queue.enqueueMany<Record<string, unknown>>([
      ...Array.from({ length: 10 }, (_, i) => ({ type: HEALTHY_RESULT_JOB, data: { i } })),
      { type: HEALTHY_RESULT_JOB, data: { refuse: true } },
      ...Array.from({ length: 10 }, (_, i) => ({ type: HEALTHY_RESULT_JOB, data: { i: 10 + i } })),
    ]);
    const offender = jobs[10];

    for (const job of jobs) {
      if (job === offender) continue;
      expect(await finished(job.id)).toMatchObject({ status: JobStatus.Completed, attempts: 1 });
    }
    const refused = await finished(offender.id);
    // Refused at each of its two attempts (the handler's maxAttempts), then failed.
    expect(refused).toMatchObject({ status: JobStatus.Failed, attempts: 2, result: null });
    expect(refused.lastError).toBe(
      'The database refused to record this attempt as completed: SQLSTATE 23514 ' +
        `(integrity constraint violation), table "jobs", constraint "${CONSTRAINT}". ` +
        'Its result was not stored.',
    );

    // Nothing loops: once the offender failed, outcome writes stop, apart from a new job's own.
    const writesSoFar = outcomeWrites();
    const witness = await worker.queue.enqueue(HEALTHY_RESULT_JOB, { witness: true });
    expect(await finished(witness.id)).toMatchObject({ status: JobStatus.Completed });
    expect(outcomeWrites()).toBe(writesSoFar + 1);

    // One line per refusal, naming the job and the SQLSTATE, quoting no result.
    const lines = logs.matching(/refused/);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.message).toContain(`job ${offender.id}`);
      expect(line.message).toContain('SQLSTATE 23514');
    }
    expect(logs.matching(new RegExp(RESULT_SECRET))).toEqual([]);
    expect(logs.matching(/Could not record/)).toEqual([]);
  });
});

import { InvalidJobQueueOptionsError, JobStatus } from 'nest-pg-job-queue';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import {
  bootFailure,
  startWorkerApp,
  useWorkerTestFile,
  WorkerApp,
} from '../support/worker-test-app';
import {
  ALWAYS_FAILS,
  BARE_STACK,
  DEAD_LETTERS,
  DeadLetterBlankHandlers,
  DeadLetterHandlers,
  DeadLetterItselfHandlers,
  DeadLetterCycleHandlers,
  DeadLetterNotAStringHandlers,
  DeadLetterTooLongHandlers,
  FAILS_ONCE,
  FAILURE_MESSAGE,
  HangingHandlers,
  HANGS,
  NOWHERE,
  RECONFIGURED,
  STACK_FRAME,
  TO_NOWHERE,
  WithDeadLetterHandlers,
  WithoutDeadLetterHandlers,
} from '../fixtures/dead-letter.handlers';

interface CopyRow {
  id: string;
  job_type: string;
  status: string;
  data: { data: unknown; error: string | null; sourceJobId: string };
  priority: number;
  unique_key: string | null;
  concurrency_key: string | null;
  max_attempts: number | null;
  attempts: number;
  meta: unknown;
  updated_at: Date;
}

/**
 * `@JobHandler(type, { deadLetter })`: a job that ran and failed for good is also enqueued as a
 * job of the dead-letter type, `{ data, error, sourceJobId }`, in the statement that failed it
 * (the trigger `jobs_dead_lettered`), whichever node failed it and however.
 */
describe('dead letters', () => {
  let app: WorkerApp;
  let handlers: DeadLetterHandlers;
  let hanging: HangingHandlers | undefined;

  const file = useWorkerTestFile({ beforeClose: () => hanging?.gate.open() });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    app.dataSource.query<T[]>(text, params);

  /** The copies of job `sourceId`, oldest first. */
  const copiesOf = (sourceId: string) =>
    sql<CopyRow>(
      `SELECT id::text AS id, job_type, status, data, priority, unique_key, concurrency_key,
              max_attempts, attempts, meta, updated_at
       FROM job_queue.jobs WHERE data->>'sourceJobId' = $1 ORDER BY id`,
      [sourceId],
    );

  beforeAll(async () => {
    // Reaps jobs whose worker stopped heartbeating for a second (its own heartbeat every 300 ms).
    app = await file.start({
      queueOptions: {
        staleAfterMs: 1_000,
        heartbeatIntervalMs: 300,
        reaperIntervalMs: 100,
        stagerIntervalMs: 50,
        worker: { concurrency: 4, pollIntervalMs: 20 },
      },
      providers: [DeadLetterHandlers],
    });
    handlers = app.app.get(DeadLetterHandlers);
  });

  it('copies a job out of attempts, once, with its data, the first line of its error and its id', async () => {
    const data = { order: 42, items: ['a', 'b'] };
    const job = await app.queue.enqueue(ALWAYS_FAILS, data, { priority: 7, uniqueKey: 'order-42' });
    const failed = await waitForJobToFinish(app.queue, job.id);
    expect(failed).toMatchObject({ status: JobStatus.Failed, attempts: 2 });
    // The whole stack stays on the original.
    expect(failed.lastError).toContain('\n    at ');

    // Inserted by the statement that failed the job: there as soon as the failure is.
    const [copy, ...more] = await copiesOf(job.id);
    expect(more).toEqual([]);
    expect(copy.job_type).toBe(DEAD_LETTERS);
    expect(copy.data).toStrictEqual({
      data,
      error: `Error: ${FAILURE_MESSAGE.split('\n')[0]}`,
      sourceJobId: job.id,
    });
    expect(copy).toMatchObject({
      priority: 7,
      unique_key: null,
      concurrency_key: null,
      meta: failed.meta ?? null,
    });

    // The dead-letter type's handler runs it like any job.
    const delivered = await waitFor(
      () => handlers.deadLetters.find((received) => received.id === copy.id),
      { description: `the dead-letter handler to receive job ${copy.id}` },
    );
    expect(delivered).toEqual({ id: copy.id, type: DEAD_LETTERS, data: copy.data });
    expect(await waitForJobToFinish(app.queue, copy.id)).toMatchObject({
      status: JobStatus.Completed,
    });
    // The original is as the failure left it.
    expect(await app.queue.getJob(job.id)).toMatchObject({ status: JobStatus.Failed });
  });

  it('never puts stack frames in the copy, even from an Error whose stack was replaced', async () => {
    const job = await app.queue.enqueue(BARE_STACK, null);
    const failed = await waitForJobToFinish(app.queue, job.id);
    expect(failed.status).toBe(JobStatus.Failed);
    expect(failed.lastError).toBe(`Error\n${STACK_FRAME}`);
    const [copy] = await copiesOf(job.id);
    expect(copy.data).toStrictEqual({ data: null, error: 'Error', sourceJobId: job.id });
  });

  it('makes no copy of a job whose retry succeeds', async () => {
    const job = await app.queue.enqueue(FAILS_ONCE, { n: 1 });
    const done = await waitForJobToFinish(app.queue, job.id);
    expect(done).toMatchObject({ status: JobStatus.Completed, attempts: 2 });
    expect(done.lastError).toContain('first attempt fails');
    // A copy is only ever made with a failure for good, which never happened.
    expect(await copiesOf(job.id)).toEqual([]);
  });

  it('leaves a copy pending when its type has no handler anywhere', async () => {
    const job = await app.queue.enqueue(TO_NOWHERE, { to: 'nowhere' });
    expect((await waitForJobToFinish(app.queue, job.id)).status).toBe(JobStatus.Failed);
    const [copy] = await copiesOf(job.id);
    expect(copy).toMatchObject({ job_type: NOWHERE, status: JobStatus.Pending, attempts: 0 });
    expect(copy.data).toStrictEqual({
      data: { to: 'nowhere' },
      error: 'Error: nobody handles the copy',
      sourceJobId: job.id,
    });
    // Later jobs run past it: a job enqueued after it completes while it still waits.
    const later = await app.queue.enqueue(FAILS_ONCE, { n: 2 });
    expect((await waitForJobToFinish(app.queue, later.id)).status).toBe(JobStatus.Completed);
    expect(await app.queue.getJob(copy.id)).toMatchObject({
      status: JobStatus.Pending,
      attempts: 0,
    });
  });

  it('copies a job the reaper fails for good, its worker lost on the last attempt', async () => {
    // This worker claims and then stops heartbeating (once a minute, stale after three).
    const holder = await file.start({
      queueOptions: {
        heartbeatIntervalMs: 60_000,
        staleAfterMs: 180_000,
        shutdownTimeoutMs: 1_000,
        worker: { concurrency: 1, pollIntervalMs: 20 },
      },
      providers: [HangingHandlers],
    });
    hanging = holder.app.get(HangingHandlers);
    const job = await app.queue.enqueue(HANGS, { lost: true });
    await waitFor(() => hanging?.started.includes(job.id), { description: 'the job to start' });

    // The other worker's reaper fails it: it had one attempt.
    const failed = await waitForJobToFinish(app.queue, job.id);
    expect(failed).toMatchObject({ status: JobStatus.Failed, attempts: 1 });
    const [copy, ...more] = await copiesOf(job.id);
    expect(more).toEqual([]);
    expect(copy.data).toStrictEqual({
      data: { lost: true },
      error: `Worker ${holder.workerId} stopped heartbeating during attempt 1, the last one`,
      sourceJobId: job.id,
    });
    await waitFor(() => handlers.deadLetters.some((received) => received.id === copy.id), {
      description: `the dead-letter handler to receive job ${copy.id}`,
    });
  });

  it('leaves the copy alone on a redrive of the original; failing again makes a second copy', async () => {
    const job = await app.queue.enqueue(TO_NOWHERE, { redriven: true });
    await waitForJobToFinish(app.queue, job.id);
    const [first] = await copiesOf(job.id);

    expect(await app.queue.redrive({ ids: [job.id] })).toBe(1);
    // The redrive moved the original only.
    expect(await copiesOf(job.id)).toEqual([first]);

    // It runs again and fails for good again: a copy per failure for good.
    await waitFor(
      async () => {
        const again = await app.queue.getJob(job.id);
        return again.status === JobStatus.Failed && again.completedAt ? again : undefined;
      },
      { description: `job ${job.id} to fail again` },
    );
    const copies = await waitFor(
      async () => {
        const found = await copiesOf(job.id);
        return found.length === 2 ? found : undefined;
      },
      { description: 'a second copy' },
    );
    expect(copies[0]).toEqual(first);
    expect(copies[1]).toMatchObject({ job_type: NOWHERE, status: JobStatus.Pending });
    expect(copies[1].data).toStrictEqual(first.data);
    expect(handlers.attempts.get(job.id)).toBe(2);
  });

  describe('the trigger, on rows written directly', () => {
    /** A job of `type` as a worker holds it, in its `attempt`. */
    const runningJob = async (type: string, attempt: number) =>
      (
        await sql<{ id: string }>(
          `INSERT INTO job_queue.jobs (job_type, status, attempts, priority, data, meta,
                                       last_error)
           VALUES ($1, 'running', $2, -3, '{"x":1}', '{"trace":"t-1"}', NULL)
           RETURNING id::text AS id`,
          [type, attempt],
        )
      )[0].id;
    const fail = (id: string) =>
      sql(
        `UPDATE job_queue.jobs SET status = 'failed', completed_at = now() - interval '1 day'
         WHERE id = $1`,
        [id],
      );

    beforeAll(() =>
      sql(
        `INSERT INTO job_queue.job_types (job_type, dead_letter_type)
         VALUES ('dl.sql', 'dl.sql-copies')`,
      ),
    );

    it('copies priority and meta, dates the copy at the failure, and stores a NULL error as null', async () => {
      const id = await runningJob('dl.sql', 1);
      await fail(id);
      const [copy] = await sql<CopyRow & { due: boolean; same_time: boolean }>(
        `SELECT c.job_type, c.status, c.data, c.priority, c.meta,
                c.run_at = o.completed_at AND c.created_at = o.completed_at AS same_time
         FROM job_queue.jobs c JOIN job_queue.jobs o ON o.id::text = c.data->>'sourceJobId'
         WHERE o.id = $1`,
        [id],
      );
      expect(copy).toEqual({
        job_type: 'dl.sql-copies',
        status: 'pending',
        data: { data: { x: 1 }, error: null, sourceJobId: id },
        priority: -3,
        meta: { trace: 't-1' },
        same_time: true,
      });
    });

    it('skips a job that never ran (failed by a dependency), a failed job written again, and types without one', async () => {
      const neverRan = await runningJob('dl.sql', 0);
      await fail(neverRan);
      const other = await runningJob('dl.sql-untyped', 1);
      await fail(other);
      const twice = await runningJob('dl.sql', 1);
      await fail(twice);
      await sql(`UPDATE job_queue.jobs SET status = 'failed' WHERE id = $1`, [twice]);
      expect(await copiesOf(neverRan)).toEqual([]);
      expect(await copiesOf(other)).toEqual([]);
      expect(await copiesOf(twice)).toHaveLength(1);
    });

    it('refuses a type as its own dead letter, and a type name longer than a job type', async () => {
      await expect(
        sql(`INSERT INTO job_queue.job_types (job_type, dead_letter_type) VALUES ('s', 's')`),
      ).rejects.toThrow(/job_types_dead_letter_type_check/);
      await expect(
        sql(`INSERT INTO job_queue.job_types (job_type, dead_letter_type) VALUES ('l', $1)`, [
          'x'.repeat(256),
        ]),
      ).rejects.toThrow(/job_types_dead_letter_type_length_check/);
    });
  });

  describe('the option', () => {
    const storedFor = async (type: string) =>
      (
        await sql<{ dead_letter_type: string | null }>(
          `SELECT dead_letter_type FROM job_queue.job_types WHERE job_type = $1`,
          [type],
        )
      )[0]?.dead_letter_type;

    it('is stored at start, and a boot without it clears it', async () => {
      expect(await storedFor(ALWAYS_FAILS)).toBe(DEAD_LETTERS);
      // The dead-letter type's own handler has none.
      expect(await storedFor(DEAD_LETTERS)).toBeNull();

      const withIt = await startWorkerApp({
        url: file.url,
        queueOptions: { worker: { pollIntervalMs: 20 } },
        providers: [WithDeadLetterHandlers],
      });
      await withIt.close();
      expect(await storedFor(RECONFIGURED)).toBe(DEAD_LETTERS);
      const withoutIt = await startWorkerApp({
        url: file.url,
        queueOptions: { worker: { pollIntervalMs: 20 } },
        providers: [WithoutDeadLetterHandlers],
      });
      await withoutIt.close();
      expect(await storedFor(RECONFIGURED)).toBeNull();
    });

    it.each([
      ['a number', DeadLetterNotAStringHandlers, 42],
      ['blank text', DeadLetterBlankHandlers, '  '],
      ['a name longer than a job type', DeadLetterTooLongHandlers, 'x'.repeat(256)],
      ["the handler's own type", DeadLetterItselfHandlers, 'dl.bad-self'],
      ['a type whose dead letters lead back', DeadLetterCycleHandlers, 'dl.cycle-a'],
    ])('refuses %s at boot, naming deadLetter and the value', async (_, fixture, value) => {
      const error = await bootFailure({
        url: file.url,
        queueOptions: { worker: { pollIntervalMs: 20 } },
        providers: [fixture],
      });
      expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
      const refused = error as InvalidJobQueueOptionsError;
      expect(refused.option).toMatch(new RegExp(` on ${fixture.name}#run: deadLetter$`));
      expect(refused.value).toEqual(value);
      expect(refused.message).toContain('deadLetter');
      expect(refused.message).toContain(String(value).slice(0, 20));
    });
  });
});

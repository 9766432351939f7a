import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobStatus,
  JobWorker,
  QueueService,
} from 'nest-pg-job-queue';
import {
  JobQueueAssertionError,
  JobQueueTester,
  JobQueueTestingModule,
} from 'nest-pg-job-queue/testing';
import { createTestDatabase, TestDatabase } from '../support/database';
import { KitHandlers } from '../fixtures/testing-kit.handlers';

const DAY_MS = 86_400_000;

/**
 * The testing kit as a user's test uses it: the real module with nothing running by itself,
 * jobs run on demand through the real claim, handlers and outcome writes, at a clock the test
 * moves; assertions on what was enqueued.
 */
describe('testing kit: JobQueueTestingModule and JobQueueTester', () => {
  let db: TestDatabase;
  let module: TestingModule;
  let tester: JobQueueTester;
  let queue: QueueService;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(() => db?.drop());

  beforeEach(async () => {
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        JobQueueTestingModule.forRoot(),
      ],
      providers: [KitHandlers],
    }).compile();
    // Each test starts from an empty queue (the handlers' schedule is written at the first drain).
    await module
      .get(DataSource)
      .query(
        'TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_schedules, ' +
          'job_queue.job_schedule_ticks CASCADE',
      );
    await module.init();
    tester = module.get(JobQueueTester);
    queue = module.get(QueueService);
  });

  afterEach(() => module?.close());

  it('drain() runs a flow in its order: the merge after its parts, with their results', async () => {
    const { steps } = await queue.flow({
      type: 'flow.merge',
      data: null,
      children: [1, 2, 3].map((n) => ({ type: 'flow.part', data: { n } })),
    });
    expect(steps.root.status).toBe(JobStatus.Blocked);
    expect(await tester.drain()).toMatchObject({ completed: 4 });
    expect(await queue.getJob(steps.root.id)).toMatchObject({
      status: JobStatus.Completed,
      result: { sum: 6, failed: [] },
    });
  });

  it("drain() runs a 'continue' merge after a part that failed for good, which it names", async () => {
    const { steps } = await queue.flow({
      steps: [
        { name: 'one', type: 'flow.part', data: { n: 1 } },
        { name: 'broken', type: 'flaky', data: null, maxAttempts: 1 },
        {
          name: 'merge',
          type: 'flow.merge',
          data: null,
          dependsOn: ['one', 'broken'],
          onDependencyFailure: 'continue',
        },
      ],
    });
    expect(await tester.drain()).toMatchObject({ completed: 2, failed: 1 });
    expect(await queue.getJob(steps.merge.id)).toMatchObject({
      status: JobStatus.Completed,
      result: { sum: 1, failed: ['broken'] },
    });
  });

  it('runs nothing by itself: no worker started, an enqueued job waits for drain()', async () => {
    expect(module.get(JobWorker).isRunning).toBe(false);
    const job = await queue.enqueue('email.audit', { to: 'a@example.com' });
    expect((await queue.getJob(job.id)).status).toBe(JobStatus.Pending);
    expect(await tester.drain()).toMatchObject({ completed: 1 });
  });

  it('drain() runs due jobs through the real path, the jobs their handlers enqueue included', async () => {
    const job = await queue.enqueue('email.send', { to: 'a@example.com' });

    const summary = await tester.drain();

    expect(summary).toMatchObject({ completed: 2, failed: 0, retried: 0, snoozed: 0 });
    expect(summary.runs.map((run) => run.job.jobType)).toEqual(['email.send', 'email.audit']);
    const done = await queue.getJob(job.id);
    expect(done).toMatchObject({
      status: JobStatus.Completed,
      result: { sent: 'a@example.com' },
      progress: 100,
      currentStage: 'sent',
      attempts: 1,
    });
    await tester.expectEnqueued({ type: 'email.audit', data: { to: 'a@example.com' }, count: 1 });
    expect(await tester.drain()).toMatchObject({ completed: 0, runs: [] });
  });

  it('drain({ types }) runs only those types', async () => {
    await queue.enqueue('email.audit', { to: 'a@example.com' });
    await queue.enqueue('patient', { n: 1 });
    const summary = await tester.drain({ types: ['email.audit'] });
    expect(summary.runs.map((run) => run.job.jobType)).toEqual(['email.audit']);
    await tester.expectEnqueued({ type: 'patient', status: JobStatus.Pending, count: 1 });
  });

  it('retries wait for their backoff on the kit clock, then fail for good at maxAttempts', async () => {
    const job = await queue.enqueue('flaky', {});

    // The kit's clock is real time plus what the test added: margins of half a second here.
    expect(await tester.drain({ types: ['flaky'] })).toMatchObject({ retried: 1, failed: 0 });
    expect(await tester.drain({ types: ['flaky'] })).toMatchObject({ runs: [] }); // due in 1 s
    tester.advanceTime(1_000);
    expect(await tester.drain({ types: ['flaky'] })).toMatchObject({ retried: 1 });
    tester.advanceTime(1_500); // the second retry waits 2 s
    expect(await tester.drain({ types: ['flaky'] })).toMatchObject({ runs: [] });
    tester.advanceTime(500);
    const last = await tester.drain({ types: ['flaky'] });

    expect(last).toMatchObject({ failed: 1, retried: 0 });
    expect(await queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Failed,
      attempts: 3,
      lastError: expect.stringContaining('the mail server said no'),
    });
  });

  it('a snooze waits on the kit clock without spending an attempt', async () => {
    const job = await queue.enqueue('patient', { n: 0 });
    expect(await tester.drain({ types: ['patient'] })).toMatchObject({ snoozed: 1, completed: 0 });
    tester.advanceTime(50_000);
    expect(await tester.drain({ types: ['patient'] })).toMatchObject({ runs: [] });
    tester.advanceTime(10_000);
    expect(await tester.drain({ types: ['patient'] })).toMatchObject({ completed: 1 });
    expect(await queue.getJob(job.id)).toMatchObject({ status: JobStatus.Completed, attempts: 1 });
  });

  it('an enqueue delay counts from the kit clock', async () => {
    tester.advanceTime(10 * DAY_MS);
    await queue.enqueue('email.audit', { to: 'later@example.com' }, { delayMs: 60_000 });
    expect(await tester.drain({ types: ['email.audit'] })).toMatchObject({ runs: [] });
    tester.advanceTime(60_000);
    expect(await tester.drain({ types: ['email.audit'] })).toMatchObject({ completed: 1 });
  });

  it('a daily cron job drained over three days gives three jobs', async () => {
    const started = Date.now();
    const fires: string[] = [];
    for (let day = 0; day < 3; day++) {
      tester.advanceTime(DAY_MS);
      const summary = await tester.drain({ types: ['report.daily'] });
      fires.push(...summary.runs.map((run) => run.job.runAt.toISOString()));
    }
    const jobs = await tester.expectEnqueued({ type: 'report.daily', count: 3 });
    expect(jobs.every((job) => job.status === JobStatus.Completed)).toBe(true);
    expect(fires).toHaveLength(3);
    expect(fires.every((at) => at.endsWith('T03:00:00.000Z'))).toBe(true);
    console.log(`three days of a daily cron drained in ${Date.now() - started} ms of wall time`);
  });

  it('drain() stops a job that re-enqueues itself at maxJobs, saying why', async () => {
    await queue.enqueue('loop', { n: 0 });
    await expect(tester.drain({ maxJobs: 25 })).rejects.toThrow(JobQueueAssertionError);
    await expect(tester.drain({ maxJobs: 5 })).rejects.toThrow(
      /drain\(\) ran 5 job\(s\) \(maxJobs\) and jobs of .*loop.* are still due: a handler may be enqueueing/,
    );
  });

  it('inside withRollback, drain({ manager }) claims, runs and records through the transaction; the rollback leaves nothing', async () => {
    const inside = await tester.withRollback(async (manager) => {
      const job = await queue.enqueue('email.audit', { to: 'a@example.com' }, { manager });
      await tester.expectNotEnqueued({ type: 'email.audit' }); // other connections see nothing

      const summary = await tester.drain({ manager });

      expect(summary).toMatchObject({ completed: 1, failed: 0 });
      const [done] = await tester.expectEnqueued({
        type: 'email.audit',
        status: JobStatus.Completed,
        manager,
        count: 1,
      });
      return { id: job.id, done };
    });
    // The handler's progress went through the transaction too: it landed, the run was not
    // superseded by a write that could not see its row.
    expect(inside.done).toMatchObject({ id: inside.id, progress: 100, currentStage: 'audited' });
    expect(await tester.enqueuedJobs()).toEqual([]);
  });

  it('perform() runs one handler with data through JSON and returns its result, progress and log', async () => {
    const performed = await tester.perform('email.send', {
      to: 'b@example.com',
      at: new Date('2026-01-02T03:04:05Z'),
    });
    expect(performed).toEqual({
      result: { sent: 'b@example.com' },
      progress: [
        { percent: 50, stage: 'rendering' },
        { percent: 100, stage: 'sent' },
      ],
      logs: [{ message: 'rendered', data: { bytes: 42 } }],
    });
    await expect(tester.perform('flaky', {})).rejects.toThrow('the mail server said no');
    await expect(tester.perform('nope', {})).rejects.toThrow(InvalidJobInputError);
    // Data enqueue would refuse is refused here too, naming the field, before the handler runs.
    await expect(tester.perform('email.send', { to: Number.NaN })).rejects.toThrow(
      expect.objectContaining({ name: 'InvalidJobInputError', field: 'data.to' }),
    );
  });

  it('expectEnqueued lists what was enqueued when nothing matches', async () => {
    await queue.enqueue('email.audit', { to: 'a@example.com' }, { priority: 5 });
    await queue.enqueue('email.audit', { to: 'b@example.com' });

    const failure = await tester
      .expectEnqueued({ type: 'email.audit', data: { to: 'c@example.com' } })
      .catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(JobQueueAssertionError);
    const message = (failure as Error).message;
    expect(message).toMatch(
      /^Expected at least one job matching \{"type":"email.audit","data":\{"to":"c@example.com"\}\}, found 0\. Enqueued:\n/,
    );
    expect(message).toMatch(
      /#\d+ email.audit pending priority 5, run at \S+Z, data \{"to":"a@example.com"\}/,
    );
    expect(message).toMatch(
      /#\d+ email.audit pending priority 100, run at \S+Z, data \{"to":"b@example.com"\}/,
    );
  });

  it('expectEnqueued with count, expectNotEnqueued, enqueuedJobs', async () => {
    await queue.enqueueMany([
      { type: 'email.audit', data: { to: 'a@example.com', tags: ['x'] } },
      { type: 'email.audit', data: { to: 'a@example.com', tags: ['y'] } },
    ]);
    await tester.expectEnqueued({ type: 'email.audit', data: { to: 'a@example.com' }, count: 2 });
    await expect(tester.expectEnqueued({ type: 'email.audit', count: 1 })).rejects.toThrow(
      /Expected 1 job\(s\) matching \{"type":"email.audit"\}, found 2/,
    );
    await tester.expectNotEnqueued({ type: 'email.send' });
    await expect(tester.expectNotEnqueued({ data: { tags: ['y'] } })).rejects.toThrow(
      /Expected no job matching \{"data":\{"tags":\["y"\]\}\}, found 1:\n {2}#\d+ email.audit/,
    );
    expect(await tester.enqueuedJobs({ data: { tags: ['x'] } })).toHaveLength(1);
  });

  it("drain() runs the reaper on the kit clock: a dead worker's job comes back once its lease ran out", async () => {
    const job = await queue.enqueue('email.audit', { to: 'a@example.com' });
    // Claimed by a worker that then died: its heartbeat stops at the claim.
    await module.get(DataSource).query(
      `UPDATE job_queue.jobs SET status = 'running', worker_id = 'dead-worker', attempts = 1,
         run_token = run_token + 1, claimed_at = now(), started_at = now(), heartbeat_at = now()
       WHERE id = $1`,
      [job.id],
    );
    expect(await tester.drain()).toMatchObject({ runs: [] });
    expect((await queue.getJob(job.id)).status).toBe(JobStatus.Running); // lease still valid

    tester.advanceTime(60_001); // staleAfterMs, the module's default
    expect(await tester.drain()).toMatchObject({ runs: [] }); // rescued, to run after its backoff
    const rescued = await queue.getJob(job.id);
    expect(rescued).toMatchObject({
      status: JobStatus.Scheduled,
      lastError: expect.stringContaining('Worker dead-worker stopped heartbeating'),
    });

    tester.setTime(rescued.runAt);
    expect(await tester.drain()).toMatchObject({ completed: 1 });
    expect(await queue.getJob(job.id)).toMatchObject({ status: JobStatus.Completed, attempts: 2 });
  });

  it('drain() runs the pruner on the kit clock: a finished job goes once its retention has passed', async () => {
    const job = await queue.enqueue('email.audit', { to: 'a@example.com' });
    expect(await tester.drain()).toMatchObject({ completed: 1 });

    tester.advanceTime(DAY_MS - 60_000); // the module's default: completed jobs kept a day
    await tester.drain();
    await tester.expectEnqueued({ type: 'email.audit', status: JobStatus.Completed, count: 1 });
    tester.advanceTime(120_000);
    await tester.drain();
    await tester.expectNotEnqueued({ type: 'email.audit' });
    await expect(queue.getJob(job.id)).rejects.toThrow(JobNotFoundError);
  });

  it('throttle windows and debounce delays count on the kit clock', async () => {
    const throttled = (): Promise<string> =>
      queue
        .enqueueWithOutcome(
          'email.audit',
          { to: 'a@example.com' },
          {
            uniqueKey: 'digest:a',
            throttleMs: 60_000,
          },
        )
        .then(({ outcome }) => outcome);
    expect(await throttled()).toBe('created');
    expect(await throttled()).toBe('skipped');
    tester.advanceTime(60_000); // the next fixed window
    expect(await throttled()).toBe('created');
    await tester.expectEnqueued({ type: 'email.audit', count: 2 });

    tester.advanceTime(DAY_MS); // past every job above: drained below with the debounced one
    const debounced = (to: string): Promise<string> =>
      queue
        .enqueueWithOutcome('email.send', { to }, { uniqueKey: 'send:b', debounceMs: 5_000 })
        .then(({ outcome }) => outcome);
    expect(await debounced('b1@example.com')).toBe('created');
    expect(await debounced('b2@example.com')).toBe('replaced');
    expect(await tester.drain({ types: ['email.send'] })).toMatchObject({ runs: [] });
    tester.advanceTime(5_000);
    const summary = await tester.drain({ types: ['email.send'] });
    expect(summary.runs.map((run) => run.job.data)).toEqual([{ to: 'b2@example.com' }]);
  });

  it('refuses a clock moved backwards or by a bad amount, naming the argument', () => {
    expect(() => tester.advanceTime(-1)).toThrow(InvalidJobInputError);
    expect(() => tester.advanceTime(-1)).toThrow(/ms/);
    expect(() => tester.setTime(new Date(Date.now() - 60_000))).toThrow(/date/);
    const later = new Date(Date.now() + DAY_MS);
    tester.setTime(later);
    expect(Math.abs(tester.now().getTime() - later.getTime())).toBeLessThan(1_000);
  });
});

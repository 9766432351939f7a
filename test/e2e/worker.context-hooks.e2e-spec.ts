import { InvalidJobInputError, Job, JobQueueInstruments, JobRunEnded } from 'nest-pg-job-queue';
import { CapturingLogger } from '../support/capturing-logger';
import { waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { ContextHandlers, TENANT_CONTEXT, tenantStorage } from '../fixtures/context.handlers';

/**
 * Per-job context: the module's `context` hooks capture at enqueue into the job's `meta` and
 * restore around the run; instruments (what metrics and tracing are made of) hear each enqueue
 * and each run's end, however it ends.
 */
describe('worker: context hooks and instruments', () => {
  let worker: WorkerApp;
  let handlers: ContextHandlers;
  const logger = new CapturingLogger();
  const file = useWorkerTestFile();

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        worker: { concurrency: 5, pollIntervalMs: 20 },
        stagerIntervalMs: 20,
        context: TENANT_CONTEXT,
        maxMetaBytes: 64,
      },
      providers: [ContextHandlers],
      logger,
    });
    handlers = worker.app.get(ContextHandlers);
  });

  const finished = (id: string): Promise<Job> => waitForJobToFinish(worker.queue, id);

  it('stores what capture() returns in meta and runs the handler inside restore()', async () => {
    const job = await tenantStorage.run('acme', () =>
      worker.queue.enqueue('context.record', { n: 1 }),
    );
    expect(job.meta).toEqual({ tenant: 'acme' });
    expect((await worker.queue.getJob(job.id)).meta).toEqual({ tenant: 'acme' });

    const done = await finished(job.id);
    expect(done.result).toEqual({ tenant: 'acme' });
    expect(handlers.tenantsSeen.get(job.id)).toEqual(['acme']);
  });

  it('stores no meta when nothing is captured, and each job of a batch gets the call context', async () => {
    const plain = await worker.queue.enqueue('context.record', { n: 2 });
    expect(plain.meta).toBeNull();
    const batch = await tenantStorage.run('globex', () =>
      worker.queue.enqueueMany([
        { type: 'context.record', data: { n: 3 } },
        { type: 'context.record', data: { n: 4 } },
      ]),
    );
    expect(batch.map((job) => job.meta)).toEqual([{ tenant: 'globex' }, { tenant: 'globex' }]);
    for (const job of batch) expect((await finished(job.id)).result).toEqual({ tenant: 'globex' });
    expect((await finished(plain.id)).result).toEqual({});
  });

  it('refuses meta over maxMetaBytes naming the field, and writes nothing', async () => {
    const count = async (): Promise<number> =>
      Number((await worker.dataSource.query('SELECT count(*) AS n FROM job_queue.jobs'))[0].n);
    const before = await count();
    const refused = await tenantStorage
      .run('x'.repeat(100), () => worker.queue.enqueue('context.record', { n: 5 }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidJobInputError);
    expect(refused).toMatchObject({ field: 'meta' });
    expect((refused as Error).message).toMatch(/maxMetaBytes/);
    expect(await count()).toBe(before);
  });

  it('tells instruments of each enqueue and of how each run ended, and survives one that throws', async () => {
    const instruments = worker.app.get(JobQueueInstruments);
    const created: string[] = [];
    const ends = new Map<string, JobRunEnded[]>();
    const removeThrowing = instruments.add({
      enqueueStarted: () => {
        throw new Error('a broken instrument');
      },
      runStarted: () => {
        throw new Error('a broken instrument');
      },
    });
    const remove = instruments.add({
      enqueueStarted: () => ({
        meta: { traced: true },
        ended: (result) => created.push(...(result.created ?? []).map((job) => job.id)),
      }),
      runStarted: (job) => ({
        ended: (ended) => ends.set(job.id, [...(ends.get(job.id) ?? []), ended]),
      }),
    });
    try {
      const flaky = await worker.queue.enqueue('context.flaky', {});
      const snoozy = await worker.queue.enqueue('context.snoozy', {});
      expect(flaky.meta).toEqual({ traced: true });
      expect(created).toEqual([flaky.id, snoozy.id]);
      await finished(flaky.id);
      await finished(snoozy.id);

      expect(ends.get(flaky.id)?.map((e) => e.end)).toEqual(['retried', 'completed']);
      expect((ends.get(flaky.id)?.[0].error as Error).message).toBe('first attempt fails');
      expect(ends.get(snoozy.id)?.map((e) => e.end)).toEqual(['snoozed', 'completed']);
      for (const ended of [...ends.values()].flat()) expect(ended.runMs).toBeGreaterThanOrEqual(0);
      expect(logger.matching(/A job queue instrument threw/).length).toBeGreaterThan(0);
    } finally {
      remove();
      removeThrowing();
    }
  });
});

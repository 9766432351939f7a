import { InvalidJobInputError, JobStatus } from 'nest-pg-job-queue';
import { waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { DtoHandlers, ReportRequest } from '../fixtures/dto.handlers';

/**
 * `@JobHandler(type, { dto })` and `enqueue(type, data, { dto })`: data turned into the class
 * (class-transformer) and validated (class-validator), at the run and at the enqueue.
 */
describe('worker: dto payloads', () => {
  let worker: WorkerApp;
  let handlers: DtoHandlers;
  const file = useWorkerTestFile();
  const SECRET = 'personal-value-4711';

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 20 }, stagerIntervalMs: 20 },
      providers: [DtoHandlers],
    });
    handlers = worker.app.get(DtoHandlers);
  });

  const jobCount = async (): Promise<number> =>
    Number((await worker.dataSource.query('SELECT count(*) AS n FROM job_queue.jobs'))[0].n);

  it('gives the handler an instance of its dto, a Date field a Date again', async () => {
    const requestedAt = new Date('2026-07-14T09:30:00.000Z');
    const job = await worker.queue.enqueue('dto.report', {
      month: '2026-07',
      requestedAt,
      lines: [{ sku: 'A-1' }],
    });
    // Stored as JSON: the date is a string in the row.
    expect((await worker.queue.getJob(job.id)).data).toEqual({
      month: '2026-07',
      requestedAt: '2026-07-14T09:30:00.000Z',
      lines: [{ sku: 'A-1' }],
    });

    const done = await waitForJobToFinish(worker.queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.result).toEqual({ year: 2026, month: '2026-07' });
    expect(handlers.seen.get(job.id)).toEqual({
      isRequest: true,
      requestedAtIsDate: true,
      ctxSeesSameData: true,
      lineIsReportLine: true,
    });
  });

  it('fails a job whose data fails the dto for good, naming fields and constraints, no values', async () => {
    const job = await worker.queue.enqueue('dto.report', {
      month: SECRET,
      requestedAt: 'sometime last week', // not a date (V8 reads digits in a string as a year)
      lines: [{ sku: '' }, { sku: 'ok' }],
    });
    const done = await waitForJobToFinish(worker.queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.attempts).toBe(1); // maxAttempts 3: not retried
    expect(handlers.seen.has(job.id)).toBe(false);
    const firstLine = done.lastError!.split('\n')[0];
    expect(firstLine).toBe(
      'InvalidJobDataError: Job data does not fit ReportRequest: data.month (matches), ' +
        'data.requestedAt (isDate), data.lines[0].sku (isLength)',
    );
    expect(done.lastError).not.toContain(SECRET);
  });

  it('fails data that is not an object without running the handler', async () => {
    const job = await worker.queue.enqueue('dto.report', [SECRET]);
    const done = await waitForJobToFinish(worker.queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.lastError).toMatch(/does not fit ReportRequest: data \(isObject\)/);
    expect(done.lastError).not.toContain(SECRET);
  });

  it('refuses data that fails the dto at enqueue, naming the fields, and writes nothing', async () => {
    const before = await jobCount();
    const refused = await worker.queue
      .enqueue(
        'dto.report',
        { month: SECRET, requestedAt: new Date() },
        { dto: ReportRequest, priority: 5 },
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidJobInputError);
    expect(refused).toMatchObject({ field: 'data.month', value: '<fails matches>' });
    expect((refused as Error).message).toBe(
      'Job data does not fit ReportRequest: data.month (matches)',
    );
    expect(JSON.stringify(refused)).not.toContain(SECRET);
    expect(await jobCount()).toBe(before);

    const accepted = await worker.queue.enqueue(
      'dto.report',
      { month: '2026-08', requestedAt: new Date('2026-08-01T00:00:00Z') },
      { dto: ReportRequest },
    );
    expect((await waitForJobToFinish(worker.queue, accepted.id)).result).toEqual({
      year: 2026,
      month: '2026-08',
    });
  });
});

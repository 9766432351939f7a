import {
  DuplicateJobHandlerError,
  InvalidJobQueueOptionsError,
  JobQueueError,
  JobStatus,
} from 'nest-pg-job-queue';
import { bootFailure, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BootOkHandlers,
  DuplicateHandlersA,
  DuplicateHandlersB,
  FractionalGlobalHandlers,
  NegativeTimeoutHandlers,
  OrderedManyPerKeyHandlers,
  UnknownOptionHandlers,
  ZeroConcurrencyHandlers,
  ZeroPerKeyHandlers,
} from '../fixtures/boot-errors.handlers';

describe('worker: boot errors', () => {
  let observer: WorkerApp;

  // Its afterAll also checks that a boot that failed left no worker (or its timers and pool).
  const file = useWorkerTestFile();

  beforeAll(async () => {
    observer = await file.start({ queueOptions: { worker: false } });
  });

  /** What booting a worker app with these handlers rejects with. */
  async function bootError(
    providers: Array<new (...args: never[]) => unknown>,
    worker: { jobTypes?: string[] } = {},
  ): Promise<Error> {
    const error = await bootFailure({
      url: file.url,
      queueOptions: { worker: { pollIntervalMs: 20, ...worker } },
      providers,
    });
    expect(error).toBeInstanceOf(JobQueueError);
    return error as Error;
  }

  it('rejects two handlers for one type, naming both Class#method', async () => {
    const error = await bootError([DuplicateHandlersA, DuplicateHandlersB]);
    expect(error).toBeInstanceOf(DuplicateJobHandlerError);
    expect(error.message).toContain('boot.duplicate');
    expect(error.message).toContain('DuplicateHandlersA#first');
    expect(error.message).toContain('DuplicateHandlersB#second');
  });

  it.each([
    ['concurrency 0', ZeroConcurrencyHandlers, 'concurrency', 'ZeroConcurrencyHandlers#run'],
    ['a negative timeoutMs', NegativeTimeoutHandlers, 'timeoutMs', 'NegativeTimeoutHandlers#run'],
    ['an unknown option key', UnknownOptionHandlers, 'retries', 'UnknownOptionHandlers#run'],
    ['concurrencyPerKey 0', ZeroPerKeyHandlers, 'concurrencyPerKey', 'ZeroPerKeyHandlers#run'],
    [
      'a fractional globalConcurrency',
      FractionalGlobalHandlers,
      'globalConcurrency',
      'FractionalGlobalHandlers#run',
    ],
    [
      'ordered with concurrencyPerKey 2',
      OrderedManyPerKeyHandlers,
      'ordered',
      'OrderedManyPerKeyHandlers#run',
    ],
  ])('rejects handler options with %s, naming the option', async (_, fixture, option, where) => {
    const error = await bootError([fixture]);
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect((error as InvalidJobQueueOptionsError).option).toContain(option);
    expect(error.message).toContain(option);
    expect(error.message).toContain(where);
  });

  it('rejects worker.jobTypes naming a type without a handler, and claims nothing', async () => {
    const pending = await observer.queue.enqueue('boot.ok', {});
    const error = await bootError([BootOkHandlers], { jobTypes: ['boot.ok', 'boot.missing'] });
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect((error as InvalidJobQueueOptionsError).option).toBe('worker.jobTypes');
    expect(error.message).toContain('boot.missing');
    expect(error.message).not.toContain("'boot.ok'");

    const job = await observer.queue.getJob(pending.id);
    expect(job.status).toBe(JobStatus.Pending);
    expect(job.attempts).toBe(0);
  });
});

import { Job, JobStatus, QueueService } from 'nest-pg-job-queue';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  CREATE_TX_EFFECTS_TABLE,
  runStarted,
  tokenOf,
  TransactionHandlers,
  TX_TIMEOUT_MS,
  TxData,
  txEffects,
} from '../fixtures/transaction.handlers';

describe('worker: handlers in transactions', () => {
  let worker: WorkerApp;
  let queue: QueueService;
  let handlers: TransactionHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.openAll() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 20 } },
      providers: [TransactionHandlers],
    });
    queue = worker.queue;
    handlers = worker.app.get(TransactionHandlers);
    await worker.dataSource.query(CREATE_TX_EFFECTS_TABLE);
  });

  const effects = (jobId: string) => txEffects(worker.dataSource, jobId);

  /** Cancels job `id`'s running first run, retries it, and waits for the new run: both keys. */
  async function cancelThenRetryWhileRunning(id: string): Promise<[string, string]> {
    const first = await runStarted(handlers, id);
    await queue.cancel(id);
    await queue.retry(id);
    return [first, await runStarted(handlers, id, first)];
  }

  async function jobLog(jobId: string): Promise<string[]> {
    const entries = await queue.jobEvents(jobId);
    return entries.map((entry) => (entry.kind === 'log' ? `log:${entry.message}` : entry.kind));
  }

  function enqueue(type: string, mode: TxData['mode']): Promise<Job> {
    return queue.enqueue(type, { mode });
  }

  /** No connection of the app's is left inside a transaction by any of the runs. */
  async function expectNoTransactionLeftOpen(): Promise<void> {
    await waitFor(
      async () => {
        const [{ open }] = await worker.dataSource.query(
          `SELECT count(*)::int AS open FROM pg_stat_activity
           WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
        );
        return open === 0;
      },
      { description: 'no connection left idle in a transaction' },
    );
  }

  it("commits the handler's writes with the completion, its log rows and last progress", async () => {
    const job = await enqueue('tx.insert', 'ok');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.result).toEqual({ wrote: done.runToken });
    expect(done.progress).toBe(50);
    expect(await effects(job.id)).toEqual([{ run_token: done.runToken, note: 'ok' }]);
    expect(await jobLog(job.id)).toEqual(
      expect.arrayContaining(['log:wrote the effect', 'completed']),
    );
  });

  it('rolls back a handler that throws, and records the attempt as failed', async () => {
    const job = await enqueue('tx.insert', 'throw');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.lastError).toContain('the handler failed after writing');
    expect(await effects(job.id)).toEqual([]);
  });

  it('rolls back a handler that returns a rejected promise', async () => {
    const job = await enqueue('tx.reject', 'ok');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.lastError).toContain('tx.reject: rejected');
    expect(await effects(job.id)).toEqual([]);
  });

  it('ends the transaction of a handler that throws before returning a promise', async () => {
    const job = await enqueue('tx.sync-throw', 'ok');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.lastError).toContain('thrown at once');
    await expectNoTransactionLeftOpen();
  });

  it('keeps only the attempt that completes: a retried run left nothing behind', async () => {
    const job = await enqueue('tx.retry', 'snooze');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    // The snoozed first attempt's effect was rolled back with it.
    expect(await effects(job.id)).toEqual([{ run_token: done.runToken, note: 'snooze' }]);
  });

  it('rolls back a run that times out, and its handler cannot write after', async () => {
    const job = await enqueue('tx.timeout', 'ignore-signal');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Failed);
    expect(done.lastError).toContain(`timed out after ${TX_TIMEOUT_MS} ms`);
    const key = `${job.id}:${done.runToken}`;
    handlers.gateFor(job.id, done.runToken).open();
    const after = await waitFor(() => handlers.afterGate.get(key), {
      description: 'the timed-out handler to try another write',
    });
    // Its connection was closed with the run: the statement fails instead of autocommitting.
    expect(after).toMatch(/AlreadyReleasedError$/);
    expect(await effects(job.id)).toEqual([]);
    await expectNoTransactionLeftOpen();
  });

  it('rolls back a run that is cancelled while it runs', async () => {
    const job = await enqueue('tx.insert', 'gate');
    await runStarted(handlers, job.id);
    await queue.cancel(job.id);
    // Its connection is given up with the run, so its write can never commit.
    await expectNoTransactionLeftOpen();
    expect((await queue.getJob(job.id)).status).toBe(JobStatus.Cancelled);
    expect(await effects(job.id)).toEqual([]);
  });

  it("cancel, then retry while the old run goes on: only the new run's write lands", async () => {
    const job = await enqueue('tx.insert', 'gate');
    const [first, second] = await cancelThenRetryWhileRunning(job.id);
    const secondToken = tokenOf(second);
    handlers.gateFor(job.id, tokenOf(first)).open();
    handlers.gateFor(job.id, secondToken).open();
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.runToken).toBe(secondToken);
    expect(await effects(job.id)).toEqual([{ run_token: secondToken, note: 'gate' }]);
  });

  it("ctx.transaction completes the job with fn's value; what the handler does after changes nothing", async () => {
    const job = await enqueue('tx.scoped', 'ok');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.result).toEqual({ wrote: done.runToken });
    expect(await effects(job.id)).toEqual([{ run_token: done.runToken, note: 'ok' }]);
    const log = await jobLog(job.id);
    expect(log).toEqual(
      expect.arrayContaining(['log:before the transaction', 'log:wrote the effect', 'completed']),
    );
    expect(log).not.toContain('log:after the transaction');
  });

  it('ctx.transaction rolls back when fn throws; ctx.manager is refused outside it', async () => {
    const job = await enqueue('tx.scoped-caught', 'ok');
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.result).toEqual({ thrown: 'fn fails', manager: 'refused' });
    expect(await effects(job.id)).toEqual([]);
  });

  it('ctx.transaction rolls back a run that is cancelled, then retried, while fn runs', async () => {
    const job = await enqueue('tx.scoped', 'gate');
    const [first, second] = await cancelThenRetryWhileRunning(job.id);
    handlers.gateFor(job.id, tokenOf(first)).open();
    handlers.gateFor(job.id, tokenOf(second)).open();
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(await effects(job.id)).toEqual([{ run_token: done.runToken, note: 'gate' }]);
  });

  it('leaves no connection inside a transaction', async () => {
    await expectNoTransactionLeftOpen();
  });
});

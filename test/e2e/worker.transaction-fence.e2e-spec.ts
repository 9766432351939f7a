import { JobStatus, QueueService } from 'nest-pg-job-queue';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  CREATE_TX_EFFECTS_TABLE,
  runStarted,
  tokenOf,
  TransactionHandlers,
  txEffects,
} from '../fixtures/transaction.handlers';

/**
 * The fence at commit: with LISTEN off and a heartbeat far away, a run whose job is cancelled
 * and retried hears nothing of it and goes on to write its completion in its transaction. That
 * write, fenced by the run's token, matches no row: the whole transaction rolls back.
 */
describe("worker: a superseded run's transaction rolls back at commit", () => {
  let worker: WorkerApp;
  let queue: QueueService;
  let handlers: TransactionHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.openAll() });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: {
        worker: { concurrency: 4, pollIntervalMs: 20, listen: false },
        staleAfterMs: 120_000,
        heartbeatIntervalMs: 40_000,
        shutdownTimeoutMs: 200,
      },
      providers: [TransactionHandlers],
    });
    queue = worker.queue;
    handlers = worker.app.get(TransactionHandlers);
    await worker.dataSource.query(CREATE_TX_EFFECTS_TABLE);
  });

  const effects = (jobId: string) => txEffects(worker.dataSource, jobId);
  const started = (jobId: string, other?: string) => runStarted(handlers, jobId, other);

  it.each([
    ['@JobHandler({ transaction: true })', 'tx.insert'],
    ['ctx.transaction(fn)', 'tx.scoped'],
  ])('%s: cancel, then retry while it runs: its row is absent', async (_, type) => {
    const job = await queue.enqueue(type, { mode: 'gate' });
    const first = await started(job.id);
    // `tx.scoped` logs a line before its transaction, a write of the run's own made at once. Were
    // it to land after the cancel, it would tell the run that it was superseded (and abort it):
    // this test is of a run told nothing, so it cancels once that write has landed.
    if (type === 'tx.scoped') {
      await waitFor(async () => (await queue.jobEvents(job.id)).some((e) => e.kind === 'log'), {
        description: "the run's log line to land",
      });
    }
    await queue.cancel(job.id);
    await queue.retry(job.id);
    const second = await started(job.id, first);

    // The old run was told nothing: it passes its gate and writes its completion, fenced out.
    handlers.gateFor(job.id, tokenOf(first)).open();
    await waitFor(() => handlers.passedGate.includes(first), {
      description: 'the superseded run to go on',
    });
    await waitFor(
      async () => {
        const [{ open }] = await worker.dataSource.query(
          `SELECT count(*)::int AS open FROM pg_stat_activity
           WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
        );
        return open === 1; // the second run's only
      },
      { description: "the superseded run's transaction to end" },
    );
    expect(await effects(job.id)).toEqual([]);
    expect((await queue.getJob(job.id)).runToken).toBe(tokenOf(second));

    handlers.gateFor(job.id, tokenOf(second)).open();
    const done = await waitForJobToFinish(queue, job.id);
    expect(done.status).toBe(JobStatus.Completed);
    expect(done.result).toEqual({ wrote: tokenOf(second) });
    expect(await effects(job.id)).toEqual([{ run_token: tokenOf(second), note: 'gate' }]);
  });

  it('shutdown aborts a transactional run: rolled back, the job handed back', async () => {
    const job = await queue.enqueue('tx.insert', { mode: 'gate' });
    await started(job.id);
    await worker.close();
    const [row] = await file.start({ queueOptions: { worker: false } }).then(async (reader) => {
      const rows = await reader.dataSource.query(
        'SELECT status, attempts FROM job_queue.jobs WHERE id = $1',
        [job.id],
      );
      const written = await reader.dataSource.query('SELECT * FROM tx_effects WHERE job_id = $1', [
        job.id,
      ]);
      expect(written).toEqual([]);
      return rows;
    });
    expect(row).toEqual({ status: JobStatus.Pending, attempts: 0 });
  });
});

import { Injectable } from '@nestjs/common';
import { Job, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { Gate } from '../support/gate';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const REINDEX = 'debounce.reindex';

/** Reindexes behind a gate, recording the data of each run in start order. */
@Injectable()
class ReindexHandlers {
  gate = new Gate();
  readonly runs: Array<{ id: string; data: unknown; attempt: number }> = [];
  failNext = 0;

  @JobHandler(REINDEX, { maxAttempts: 2, backoff: { baseDelayMs: 60_000, jitter: 0 } })
  async reindex(job: Job): Promise<string> {
    this.runs.push({ id: job.id, data: job.data, attempt: job.attempts });
    await this.gate.wait();
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('index unavailable');
    }
    return 'indexed';
  }
}

/**
 * A debounced enqueue while its key's job has started: one successor, blocked until the holder
 * finishes whatever its outcome, holding the last call's data, then run. A real worker runs the
 * holder; the statuses come from its claim and its outcome, not from the test.
 */
describe('debounceMs: the successor of a started holder', () => {
  let handlers: ReindexHandlers | undefined;
  const file = useWorkerTestFile({ beforeClose: () => handlers?.gate.open() });
  let app: WorkerApp;

  beforeAll(async () => {
    app = await file.start({
      queueOptions: { worker: { concurrency: 2, pollIntervalMs: 20 } },
      providers: [ReindexHandlers],
    });
    handlers = app.app.get(ReindexHandlers);
  });

  // Each test ends with its handlers let through and its jobs deleted, a holder waiting for
  // its retry included.
  afterEach(async () => {
    handlers!.gate.open();
    await waitFor(
      async () =>
        (
          await app.dataSource.query(
            `SELECT count(*)::int AS n FROM job_queue.jobs WHERE status IN ('claimed', 'running')`,
          )
        )[0].n === 0,
      { description: 'the test’s running jobs to finish' },
    );
    await app.dataSource.query(`DELETE FROM job_queue.jobs`);
    Object.assign(handlers!, { gate: new Gate(), failNext: 0 });
    handlers!.runs.length = 0;
  });

  /** A debounced call of key `key` with data `{ rev }`; `extra`: more options. */
  const debounce = (key: string, rev: number, extra: object = {}) =>
    app.queue.enqueueWithOutcome(REINDEX, { rev }, { uniqueKey: key, debounceMs: 0, ...extra });

  const runningHolder = async (key: string, extra: object = {}) => {
    const { job } = await debounce(key, 1, extra);
    await waitFor(() => (handlers as ReindexHandlers).runs.some((run) => run.id === job.id), {
      description: `job ${job.id}'s handler to start`,
    });
    return job;
  };

  it('runs the last call’s data once after the holder: created, then replaced, then run', async () => {
    const holder = await runningHolder('doc:1');

    const second = await debounce('doc:1', 2);
    const third = await debounce('doc:1', 3);
    expect(second.outcome).toBe('created');
    expect(second.job).toMatchObject({ status: JobStatus.Blocked, data: { rev: 2 } });
    expect(third).toMatchObject({
      outcome: 'replaced',
      job: { id: second.job.id, data: { rev: 3 } },
    });
    expect((await app.queue.getJob(holder.id)).data).toEqual({ rev: 1 });

    // Not claimable while the holder runs.
    expect((await app.queue.getJob(second.job.id)).status).toBe(JobStatus.Blocked);
    handlers!.gate.open();
    const done = await waitForJobToFinish(app.queue, second.job.id);
    const first = await app.queue.getJob(holder.id);

    expect(done).toMatchObject({ status: JobStatus.Completed, data: { rev: 3 } });
    expect(handlers!.runs.map((run) => run.data)).toEqual([{ rev: 1 }, { rev: 3 }]);
    expect(done.startedAt!.getTime()).toBeGreaterThanOrEqual(first.completedAt!.getTime());
  });

  it('runs the successor after a holder that failed for good, and after one cancelled', async () => {
    handlers!.failNext = 1;
    const failing = await runningHolder('doc:fails', { maxAttempts: 1 });
    const afterFailure = await debounce('doc:fails', 2);
    handlers!.gate.open();
    expect(await waitForJobToFinish(app.queue, failing.id)).toMatchObject({
      status: JobStatus.Failed,
    });
    expect(await waitForJobToFinish(app.queue, afterFailure.job.id)).toMatchObject({
      status: JobStatus.Completed,
      data: { rev: 2 },
    });

    handlers!.gate = new Gate();
    const cancelled = await runningHolder('doc:cancelled');
    const afterCancel = await debounce('doc:cancelled', 2);
    await app.queue.cancel(cancelled.id);
    handlers!.gate.open();
    expect(await waitForJobToFinish(app.queue, afterCancel.job.id)).toMatchObject({
      status: JobStatus.Completed,
      data: { rev: 2 },
    });
  });

  it('a holder that retries keeps the successor waiting; calls meanwhile replace the successor', async () => {
    handlers!.failNext = 1;
    const holder = await runningHolder('doc:retry');
    const successor = await debounce('doc:retry', 2);
    handlers!.gate.open();
    await waitFor(async () => (await app.queue.getJob(holder.id)).status === JobStatus.Scheduled, {
      description: `job ${holder.id} to wait for its retry`,
    });

    // The holder has not started again: the call still goes to the successor, which runs last.
    const later = await debounce('doc:retry', 3);
    expect(later).toMatchObject({ outcome: 'replaced', job: { id: successor.job.id } });
    expect((await app.queue.getJob(holder.id)).data).toEqual({ rev: 1 });
    expect((await app.queue.getJob(successor.job.id)).status).toBe(JobStatus.Blocked);
  });

  it('20 calls at once while the holder runs make one successor: one created, 19 replaced', async () => {
    const holder = await runningHolder('doc:burst');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => debounce('doc:burst', 100 + i)),
    );

    expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'replaced')).toHaveLength(19);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect(results[0].job.id).not.toBe(holder.id);
    const rows = await app.dataSource.query(
      `SELECT status, count(*)::int AS n FROM job_queue.jobs WHERE unique_key = 'doc:burst'
       GROUP BY status ORDER BY status`,
    );
    expect(rows).toEqual([
      { status: 'blocked', n: 1 },
      { status: 'running', n: 1 },
    ]);
  });

  it('a key that counts in a finished status gets no successor: the call is skipped', async () => {
    const states = ['scheduled', 'pending', 'waiting', 'claimed', 'running', 'completed'];
    const holder = await runningHolder('doc:kept', { uniqueStates: states });

    const call = await debounce('doc:kept', 2, { uniqueStates: states });

    expect(call).toMatchObject({ outcome: 'skipped', job: { id: holder.id } });
  });
});

import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { Job, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { Gate } from '../support/gate';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const HELD = 'outcome.held';
const QUICK = 'outcome.quick';

@Injectable()
class OutcomeHandlers {
  readonly heldRan = new Gate();
  readonly finishHeld = new Gate();

  @JobHandler(HELD)
  async held(): Promise<string> {
    this.heldRan.open();
    await this.finishHeld.wait();
    return 'held';
  }

  @JobHandler(QUICK)
  quick(job: Job<{ n: number }>): number {
    return job.data.n;
  }
}

/**
 * A worker writes its outcomes in batches, and keeps more than one write under way: an outcome
 * write that waits (here on a row lock an app's transaction holds, as a long report or a
 * migration might) must not hold back the outcomes of jobs that finish after it.
 */
describe('worker: an outcome write that waits on a lock', () => {
  let worker: WorkerApp;
  let handlers: OutcomeHandlers;
  let locker: Client | undefined;

  const file = useWorkerTestFile({
    beforeClose: async () => {
      handlers?.finishHeld.open();
      await locker?.end().catch(() => undefined);
    },
  });

  beforeAll(async () => {
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 50 } },
      providers: [OutcomeHandlers],
    });
    handlers = worker.app.get(OutcomeHandlers);
  });

  it("holds back no later job's outcome, and lands once the lock is gone", async () => {
    const held = await worker.queue.enqueue(HELD, {});
    await handlers.heldRan.wait();

    // An app's transaction locks the running job's row; its outcome write will wait for it.
    locker = new Client({ connectionString: file.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE', [held.id]);
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows[0].pid;
    handlers.finishHeld.open();
    await waitFor(
      async () => {
        const waiting = (await worker.dataSource.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE $1::int = ANY (pg_blocking_pids(pid)) AND query LIKE '%completed_at =%'`,
          [lockerPid],
        )) as unknown[];
        return waiting.length > 0;
      },
      { description: "the held job's outcome write to wait on the lock" },
    );

    const quick = await worker.queue.enqueueMany(
      Array.from({ length: 5 }, (_, n) => ({ type: QUICK, data: { n } })),
    );
    for (const job of quick) {
      const done = await waitFor(
        async () => {
          const now = await worker.queue.getJob(job.id);
          return now.status === JobStatus.Completed ? now : undefined;
        },
        { description: `quick job ${job.id} to complete while the lock is held` },
      );
      expect(done.result).toBe(quick.indexOf(job));
    }
    expect((await worker.queue.getJob(held.id)).status).toBe(JobStatus.Running);

    await locker.query('COMMIT');
    await locker.end();
    locker = undefined;
    const landed = await waitFor(
      async () => {
        const now = await worker.queue.getJob(held.id);
        return now.status === JobStatus.Completed ? now : undefined;
      },
      { description: `the held job ${held.id} to complete once the lock is gone` },
    );
    expect(landed.result).toBe('held');
    expect(landed.attempts).toBe(1);
  });
});

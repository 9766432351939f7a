import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from 'pg';
import { Job, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const STREAM = 'stream';
/** The stream's and the late job's priority: one (type, priority), so one cursor for both. */
const PRIORITY = 100;
const PER_TICK = 3;
const TICK_MS = 20;
/** Newer jobs that run while the late job's transaction is open: the cursor is well past it. */
const NEWER_BEFORE_COMMIT = 50;

@Injectable()
class StreamHandlers {
  /** Every run, in order, by job id. */
  readonly ran: string[] = [];

  @JobHandler(STREAM)
  record(job: Job): void {
    this.ran.push(job.id);
  }
}

/** Enqueues a few stream jobs every `TICK_MS` until stopped; remembers what it enqueued. */
class Producer {
  readonly enqueued: string[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(private readonly app: WorkerApp) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const jobs = await this.app.queue.enqueueMany(
        Array.from({ length: PER_TICK }, () => ({ type: STREAM, data: {}, priority: PRIORITY })),
      );
      this.enqueued.push(...jobs.map((job) => job.id));
      await delay(TICK_MS);
    }
  }

  /** How many stream jobs enqueued after the `since`-th one have run. */
  ranSince(handlers: StreamHandlers, since: number): number {
    const newer = new Set(this.enqueued.slice(since));
    return handlers.ran.filter((id) => newer.has(id)).length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/**
 * A claim resumes each type and priority after where this worker's last claim of it ended
 * (`ClaimCursors`). A job committed late, by a transaction that began before newer jobs of its
 * type and priority were claimed, sorts before that cursor: it must still run, while a steady
 * stream of newer jobs keeps every claim resuming past it.
 */
describe('worker: a job committed late, behind the claims of newer jobs', () => {
  let producerApp: WorkerApp;
  let worker: WorkerApp;
  let handlers: StreamHandlers;
  let producer: Producer | undefined;
  let lateTx: Client | undefined;

  const file = useWorkerTestFile({
    beforeClose: async () => {
      await producer?.stop();
      await lateTx?.end().catch(() => undefined);
    },
  });

  beforeAll(async () => {
    producerApp = await file.start({ queueOptions: { worker: false } });
    worker = await file.start({
      queueOptions: { worker: { concurrency: 4, pollIntervalMs: 50 } },
      providers: [StreamHandlers],
    });
    handlers = worker.app.get(StreamHandlers);
  });

  it('runs the late job once, soon after its commit, while the stream keeps running', async () => {
    producer = new Producer(producerApp);
    await waitFor(() => handlers.ran.length >= 10, { description: 'the stream to run' });

    // The late job: inserted in a transaction that stays open, so its created_at (and run_at)
    // is that transaction's start, before every job enqueued from here on.
    lateTx = new Client({ connectionString: file.url });
    await lateTx.connect();
    await lateTx.query('BEGIN');
    const {
      rows: [late],
    } = await lateTx.query<{ id: string; created_at: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, priority) VALUES ($1, '{"late": true}', $2)
       RETURNING id::text AS id, created_at::text AS created_at`,
      [STREAM, PRIORITY],
    );
    const enqueuedBefore = producer.enqueued.length;

    await waitFor(() => producer!.ranSince(handlers, enqueuedBefore) >= NEWER_BEFORE_COMMIT, {
      timeoutMs: 15_000,
      description: `${NEWER_BEFORE_COMMIT} stream jobs newer than the late one to run`,
    });
    // Sanity: those newer jobs sort after the late one (same type and priority, later created_at),
    // and were claimed (they ran; their completion may not be written yet).
    const [{ newer }] = (await producerApp.dataSource.query(
      `SELECT count(*)::int AS newer FROM job_queue.jobs
       WHERE job_type = $1 AND priority = $2 AND status <> $3 AND created_at > $4::timestamptz`,
      [STREAM, PRIORITY, JobStatus.Pending, late.created_at],
    )) as Array<{ newer: number }>;
    // (Less the batch that may have been in flight at the insert: its transaction began first.)
    expect(newer).toBeGreaterThanOrEqual(NEWER_BEFORE_COMMIT - PER_TICK);
    expect(handlers.ran).not.toContain(late.id);

    await lateTx.query('COMMIT');
    await lateTx.end();
    lateTx = undefined;
    const enqueuedAtCommit = producer.enqueued.length;

    await waitFor(() => handlers.ran.includes(late.id), {
      timeoutMs: 15_000,
      description: `the late job ${late.id} to run`,
    });
    await waitFor(
      async () => (await producerApp.queue.getJob(late.id)).status === JobStatus.Completed,
      { description: `the late job ${late.id} to complete` },
    );
    // The stream did not stop for it: jobs enqueued after the commit ran too.
    await waitFor(() => producer!.ranSince(handlers, enqueuedAtCommit) >= NEWER_BEFORE_COMMIT, {
      timeoutMs: 15_000,
      description: 'stream jobs enqueued after the commit to run',
    });
    await producer.stop();

    expect(handlers.ran.filter((id) => id === late.id)).toHaveLength(1);
    const lateJob = await producerApp.queue.getJob(late.id);
    expect(lateJob).toMatchObject({ status: JobStatus.Completed, attempts: 1 });
  });
});

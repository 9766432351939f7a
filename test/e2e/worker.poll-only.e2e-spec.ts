import { Injectable } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { Job, JobContext, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { untilAborted } from '../support/gate';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const RECORD = 'poll-only-record';
const FLAKY = 'poll-only-flaky';
const BLOCK = 'poll-only-block';

@Injectable()
class PollOnlyHandlers {
  readonly started = new Set<string>();

  @JobHandler(RECORD)
  record(job: Job): { ran: string } {
    return { ran: job.id };
  }

  /** Fails its first attempt, succeeds on the second. */
  @JobHandler(FLAKY, { maxAttempts: 2, backoff: { baseDelayMs: 10, maxDelayMs: 10, jitter: 0 } })
  flaky(job: Job): { attempt: number } {
    if (job.attempts === 1) throw new Error('first attempt fails');
    return { attempt: job.attempts };
  }

  /** Runs until cancelled. */
  @JobHandler(BLOCK)
  async block(job: Job, ctx: JobContext): Promise<never> {
    this.started.add(job.id);
    return untilAborted(ctx.signal);
  }
}

/** What a session carries beyond one transaction: what PgBouncer's transaction mode would break. */
interface SessionState {
  listening: number;
  advisoryLocks: number;
  preparedStatements: number;
  sessionSettings: string[];
}

/**
 * `worker.listen: false`, as behind PgBouncer in transaction mode: the core scenarios still work,
 * and none of the worker's connections holds session state (LISTEN, a session SET, a session
 * advisory lock, a named prepared statement), so any of its transactions could run on any
 * server connection.
 */
describe('worker: poll-only mode (listen: false)', () => {
  let producer: WorkerApp;
  let worker: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
    worker = await file.start({
      queueOptions: { worker: { listen: false, pollIntervalMs: 50 } },
      providers: [PollOnlyHandlers],
    });
  });

  const settled = (id: string, status: JobStatus): Promise<Job> =>
    waitFor(
      async () => {
        const job = await producer.queue.getJob(id);
        return job.status === status ? job : undefined;
      },
      { description: `job ${id} to be ${status}` },
    );

  /** Every connection in the worker's pool, each asked about its own session. */
  async function workerSessionStates(): Promise<SessionState[]> {
    const pool = (worker.dataSource.driver as unknown as { master: Pool }).master;
    const count = pool.totalCount;
    expect(count).toBeGreaterThan(0);
    // Idle clients are handed out first: taking `count` at once gets every one of them.
    const clients: PoolClient[] = await Promise.all(
      Array.from({ length: count }, () => pool.connect()),
    );
    try {
      return await Promise.all(
        clients.map(async (client) => {
          const { rows } = await client.query(
            `SELECT (SELECT count(*)::int FROM pg_listening_channels()) AS listening,
                    (SELECT count(*)::int FROM pg_locks
                     WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS "advisoryLocks",
                    (SELECT count(*)::int FROM pg_prepared_statements) AS "preparedStatements",
                    (SELECT coalesce(array_agg(name ORDER BY name), '{}') FROM pg_settings
                     WHERE source = 'session') AS "sessionSettings"`,
          );
          return rows[0] as SessionState;
        }),
      );
    } finally {
      for (const client of clients) client.release();
    }
  }

  it('runs, retries and cancels jobs by polling alone', async () => {
    const done = await producer.queue.enqueue(RECORD, { n: 1 });
    expect((await settled(done.id, JobStatus.Completed)).result).toEqual({ ran: done.id });

    const flaky = await producer.queue.enqueue(FLAKY, {});
    const retried = await settled(flaky.id, JobStatus.Completed);
    expect(retried).toMatchObject({ attempts: 2, result: { attempt: 2 } });
    expect(retried.lastError).toMatch(/first attempt fails/);

    const blocked = await producer.queue.enqueue(BLOCK, {});
    const handlers = worker.app.get(PollOnlyHandlers);
    await waitFor(() => handlers.started.has(blocked.id), { description: 'the blocker to run' });
    await producer.queue.cancel(blocked.id);
    await settled(blocked.id, JobStatus.Cancelled);
  });

  it('leaves no LISTEN and no other session state on any worker connection', async () => {
    const listeners = await producer.dataSource.query(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND query ILIKE 'LISTEN %'`,
    );
    expect(listeners).toEqual([]);
    const states = await workerSessionStates();
    for (const state of states) {
      expect(state).toEqual({
        listening: 0,
        advisoryLocks: 0,
        preparedStatements: 0,
        sessionSettings: [],
      });
    }
  });
});

import {
  JobQueueError,
  JobQueueUnavailableError,
  JobStateConflictError,
  JobStatus,
} from 'nest-pg-job-queue';
import { expectNoPayload, rejection } from '../support/payload-privacy';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const SECRET = 'payload-secret-a41c';
/** One database and enqueue-only app for the file. */
const app = useQueueTestingModule();

const payload = (extra: Record<string, unknown> = {}) => ({ note: SECRET, ...extra });

/**
 * What QueueService throws when PostgreSQL refuses a statement its own checks let through: a typed
 * error with the SQLSTATE and nothing of the statement (its parameters hold job payloads), so
 * neither the caller nor a log sees a payload. A unique key taken by a concurrent retry is a
 * state conflict, like one taken before.
 */
describe('QueueService: a statement the database refuses', () => {
  const count = async (): Promise<number> => {
    const [row] = await app.dataSource.query(`SELECT count(*)::int AS count FROM job_queue.jobs`);
    return row.count;
  };

  beforeAll(async () => {
    // A trigger of the app's own (in this file's database) that quotes the payload in its error message.
    await app.dataSource.query(`
      CREATE FUNCTION refuse_with_payload() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'refused job: %', NEW.data USING DETAIL = NEW.data::text;
      END $$;
      CREATE TRIGGER refuse_with_payload BEFORE INSERT ON job_queue.jobs
        FOR EACH ROW WHEN (NEW.job_type = 'refused') EXECUTE FUNCTION refuse_with_payload();`);
  });

  /** A typed error carrying the SQLSTATE, and nothing of the statement or its parameters. */
  function expectDatabaseError(error: unknown, code: string): void {
    expect(error).toBeInstanceOf(JobQueueError);
    expect(error).toMatchObject({ name: 'JobQueueDatabaseError', code });
    expect((error as Error).message).toContain(code);
    for (const key of ['query', 'parameters', 'driverError', 'detail', 'where', 'cause']) {
      expect(error).not.toHaveProperty(key);
    }
    expectNoPayload(error, SECRET);
  }

  it('enqueue gets a JobQueueDatabaseError without the payload', async () => {
    const before = await count();
    const error = await rejection(() => app.queue.enqueue('refused', payload()));
    expectDatabaseError(error, 'P0001');
    expect(await count()).toBe(before);
  });

  it('enqueueMany too, whatever the batch holds', async () => {
    const error = await rejection(() =>
      app.queue.enqueueMany([
        { type: 'ok', data: payload({ n: 1 }) },
        { type: 'refused', data: payload({ n: 2 }) },
      ]),
    );
    expectDatabaseError(error, 'P0001');
    const [{ count }] = await app.dataSource.query(
      `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type IN ('ok', 'refused')`,
    );
    expect(count).toBe(0);
  });

  it("in the caller's failed transaction (manager)", async () => {
    const error = await rejection(() =>
      app.dataSource.transaction(async (manager) => {
        await manager.query(`SELECT 1/0`).catch(() => undefined);
        await app.queue.enqueue('in_tx', payload(), { manager });
      }),
    );
    expectDatabaseError(error, '25P02');
  });

  it('a connection lost mid-call gives JobQueueUnavailableError without the payload', async () => {
    // The insert waits on a table lock; its server process is then stopped (57P01).
    const locker = app.dataSource.createQueryRunner();
    await locker.connect();
    try {
      await locker.startTransaction();
      await locker.query(`LOCK TABLE job_queue.jobs IN ACCESS EXCLUSIVE MODE`);
      const lost = rejection(() =>
        app.queue.enqueueMany([
          { type: 'lost', data: payload({ n: 1 }) },
          { type: 'lost', data: payload({ n: 2 }) },
        ]),
      );
      const pid = await waitFor(
        async () => {
          // Not through `locker`: a transaction sees one snapshot of pg_stat_activity.
          const rows = await app.dataSource.query(
            `SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'
                AND query LIKE '%INSERT INTO "job_queue".jobs%'`,
          );
          return rows[0]?.pid as number | undefined;
        },
        { description: 'the insert to wait on the lock' },
      );
      await app.dataSource.query(`SELECT pg_terminate_backend($1)`, [pid]);
      const error = await lost;
      expect(error).toBeInstanceOf(JobQueueUnavailableError);
      expectNoPayload(error, SECRET);
    } finally {
      await locker.rollbackTransaction();
      await locker.release();
    }
  });
});

describe('QueueService: retry of two finished jobs that share a unique key, at once', () => {
  it('the loser gets JobStateConflictError and its row stays as it was', async () => {
    const first = await app.queue.enqueue('race', payload(), { uniqueKey: 'race-key' });
    await app.dataSource.query(`UPDATE job_queue.jobs SET status = 'failed' WHERE id = $1`, [
      first.id,
    ]);
    const second = await app.queue.enqueue('race', payload(), { uniqueKey: 'race-key' });
    await app.dataSource.query(`UPDATE job_queue.jobs SET status = 'cancelled' WHERE id = $1`, [
      second.id,
    ]);

    // The winner: the first job's retry, committed only once the second one waits on it.
    const winner = app.dataSource.createQueryRunner();
    await winner.connect();
    try {
      await winner.startTransaction();
      const [{ pid: winnerPid }]: Array<{ pid: number }> = await winner.query(
        `SELECT pg_backend_pid() AS pid`,
      );
      await winner.query(`UPDATE job_queue.jobs SET status = 'pending' WHERE id = $1`, [first.id]);
      const loser = rejection(() => app.queue.retry(second.id));
      // Whatever the retry's text and however the server truncates it in pg_stat_activity: a
      // session the winner's transaction blocks.
      await waitFor(
        async () => {
          const [{ waiting }] = await app.dataSource.query(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
              WHERE datname = current_database() AND $1::int = ANY (pg_blocking_pids(pid))`,
            [winnerPid],
          );
          return waiting > 0;
        },
        { description: 'the second retry to wait on the first one' },
      );
      await winner.commitTransaction();

      const error = await loser;
      expect(error).toBeInstanceOf(JobStateConflictError);
      expect(error).toMatchObject({ jobId: second.id, status: JobStatus.Cancelled });
      expectNoPayload(error, SECRET);
      expect((await app.queue.getJob(second.id)).status).toBe(JobStatus.Cancelled);
      expect((await app.queue.getJob(first.id)).status).toBe(JobStatus.Pending);
    } finally {
      if (winner.isTransactionActive) await winner.rollbackTransaction();
      await winner.release();
    }
  });
});

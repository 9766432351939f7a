import { InvalidJobInputError, JobLogEntry, JobNotFoundError } from 'nest-pg-job-queue';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { rescueStaleJobs } from '../../libs/job-queue/src/sql/rescue-stale-jobs.query';
import { updateRunProgress } from '../../libs/job-queue/src/sql/update-progress.query';
import { useQueueTestingModule } from '../support/test-app';

const FALLBACK = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, jitter: 0 };

/**
 * The rows of a job's log that statements outside a run write: a cancel, the reaper's rescue, a
 * management progress write; each with the run's `claimed` row when the run it ends wrote none.
 * And `jobEvents`' reading: pages, bad input, an unknown job.
 */
describe("a job's log: rows written from outside a run, and jobEvents", () => {
  const app = useQueueTestingModule();

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  /** A job held by worker `gone` in its run `token`, claimed an hour ago, lease expired. */
  async function heldJob(token = 1): Promise<string> {
    const [{ id }] = await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, worker_id, attempts, run_token, claimed_at,
                                   heartbeat_at)
       VALUES ('t', 'running', 'gone', 1, $1, now() - interval '1 hour', now() - interval '1 hour')
       RETURNING id::text`,
      [token],
    );
    return id;
  }

  const shape = (rows: JobLogEntry[]) => rows.map((row) => [row.kind, row.attempt, row.runToken]);

  async function countedRows(id: string): Promise<JobLogEntry[]> {
    const rows = await app.queue.jobEvents(id);
    expect((await app.queue.getJob(id)).eventsCount).toBe(rows.length);
    return rows;
  }

  it('a cancel of a waiting job writes its cancelled row only', async () => {
    const job = await app.queue.enqueue('t', {});
    await app.queue.cancel(job.id);
    expect(shape(await countedRows(job.id))).toEqual([['cancelled', 0, 0]]);
  });

  it("a cancel of a running job writes the run's claimed row first if the run wrote none", async () => {
    const silent = await heldJob();
    await app.queue.cancel(silent);
    const rows = await countedRows(silent);
    expect(shape(rows)).toEqual([
      ['claimed', 1, 1],
      ['cancelled', 1, 1],
    ]);
    expect(rows[0].data).toEqual({ workerId: 'gone' });
    expect(rows[0].at.getTime()).toBeLessThan(rows[1].at.getTime() - 3_000_000);

    const logged = await heldJob();
    const line = { jobId: logged, attempt: 1, at: null, message: 'hello', dataJson: null };
    await updateRunProgress(app.dataSource, DEFAULT_SCHEMA, logged, 1, {
      progress: null,
      stage: undefined,
      rows: [
        { ...line, kind: 'claimed', message: null },
        { ...line, kind: 'log' },
      ],
    });
    await app.queue.cancel(logged);
    expect(shape(await countedRows(logged))).toEqual([
      ['claimed', 1, 1],
      ['log', 1, 1],
      ['cancelled', 1, 1],
    ]);
  });

  it('a rescue writes the dead run its claimed row and a rescued row saying why', async () => {
    const id = await heldJob(4);
    expect(await rescueStaleJobs(app.dataSource, DEFAULT_SCHEMA, 60_000, FALLBACK)).toHaveLength(1);
    const rows = await countedRows(id);
    expect(shape(rows)).toEqual([
      ['claimed', 1, 4],
      ['rescued', 1, 4],
    ]);
    expect(rows[1].message).toBe('Worker gone stopped heartbeating during attempt 1');
  });

  it('a management progress write adds a progress row', async () => {
    const job = await app.queue.enqueue('t', {});
    await app.queue.updateProgress(job.id, 40, 'loading');
    const rows = await countedRows(job.id);
    expect(shape(rows)).toEqual([['progress', 0, 0]]);
    expect(rows[0].data).toEqual({ progress: 40, stage: 'loading' });
  });

  it('reads a log in pages, and refuses bad input and unknown jobs', async () => {
    const job = await app.queue.enqueue('t', {});
    for (let i = 1; i <= 5; i++) await app.queue.updateProgress(job.id, i * 10);
    const first = await app.queue.jobEvents(job.id, { limit: 2 });
    const rest = await app.queue.jobEvents(job.id, { after: first[1].id });
    expect([...first, ...rest].map((row) => (row.data as { progress: number }).progress)).toEqual([
      10, 20, 30, 40, 50,
    ]);
    expect(await app.queue.jobEvents(job.id, { after: rest[2].id })).toEqual([]);

    await expect(app.queue.jobEvents('999999')).rejects.toBeInstanceOf(JobNotFoundError);
    for (const [options, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ after: 'x' }, 'after'],
      [{ before: '1' }, 'before'],
    ] as const) {
      const refused = await app.queue.jobEvents(job.id, options as never).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidJobInputError);
      expect((refused as InvalidJobInputError).field).toBe(field);
    }
  });
});

import { Job, JobLogEntry, JobNotFoundError, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { CapturingLogger } from '../support/capturing-logger';
import { JobLogHandlers, SECRET_LINE } from '../fixtures/job-log.handlers';
import { RunningJobs } from '../../libs/job-queue/src/worker/running-jobs';

const THROTTLE_MS = 100;
const MAX_LOG_ROWS = 10;

describe("a job's log: ctx.log lines and the queue's own rows", () => {
  let worker: WorkerApp;
  let fullLog: WorkerApp;
  let handlers: JobLogHandlers;
  const logger = new CapturingLogger();

  const file = useWorkerTestFile({ beforeClose: () => handlers?.gate.open() });

  beforeAll(async () => {
    // No LISTEN and a slow heartbeat: a cancelled run learns of it late, and goes on writing.
    const queueOptions = {
      progressThrottleMs: THROTTLE_MS,
      staleAfterMs: 180_000,
      heartbeatIntervalMs: 60_000,
      events: { maxLogRowsPerJob: MAX_LOG_ROWS },
    };
    worker = await file.start({
      queueOptions: {
        ...queueOptions,
        worker: {
          pollIntervalMs: 20,
          listen: false,
          jobTypes: [
            'log.retry-then-complete',
            'log.fails',
            'log.snoozes-once',
            'log.many',
            'log.outlives-cancel',
            'log.plain',
            'log.bad-lines',
          ],
        },
      },
      providers: [JobLogHandlers],
      logger,
    });
    handlers = worker.app.get(JobLogHandlers);
    // The plain completion's other shape: this worker writes every run's rows.
    fullLog = await file.start({
      queueOptions: {
        ...queueOptions,
        events: { ...queueOptions.events, logCompletedRuns: true },
        worker: { pollIntervalMs: 20, listen: false, jobTypes: ['log.plain-full'] },
      },
      providers: [JobLogHandlers],
    });
  });

  function finished(id: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = await worker.queue.getJob(id);
        return [JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled].includes(job.status)
          ? job
          : undefined;
      },
      { description: `job ${id} to finish` },
    );
  }

  /** The whole log, read in pages of 3 to go through `after`; `eventsCount` must count it. */
  async function wholeLog(job: Job): Promise<JobLogEntry[]> {
    const rows: JobLogEntry[] = [];
    for (;;) {
      const page = await worker.queue.jobEvents(job.id, { after: rows.at(-1)?.id, limit: 3 });
      rows.push(...page);
      if (page.length < 3) break;
    }
    expect(rows.map((row) => BigInt(row.id))).toEqual(
      rows.map((row) => BigInt(row.id)).sort((a, b) => (a < b ? -1 : 1)),
    );
    expect((await worker.queue.getJob(job.id)).eventsCount).toBe(rows.length);
    return rows;
  }

  const shape = (rows: JobLogEntry[]) =>
    rows.map((row) => [row.kind, row.attempt, row.message] as const);

  it("holds each run in order: claimed, its lines, and how it ended (the error's first line)", async () => {
    const job = await finished((await worker.queue.enqueue('log.retry-then-complete', {})).id);
    expect(job.status).toBe(JobStatus.Completed);
    const rows = await wholeLog(job);
    expect(shape(rows)).toEqual([
      ['claimed', 1, null],
      ['log', 1, 'attempt 1'],
      ['retrying', 1, 'Error: first line of the failure'],
      ['claimed', 2, null],
      ['log', 2, 'attempt 2'],
      ['completed', 2, null],
    ]);
    expect(rows[1].data).toEqual({ attempt: 1 });
    expect(rows[0].data).toEqual({ workerId: worker.workerId });
    expect(new Set(rows.slice(0, 3).map((row) => row.runToken)).size).toBe(1);
    expect(rows[3].runToken).toBeGreaterThan(rows[0].runToken);
    for (const row of rows) expect(row.at).toBeInstanceOf(Date);
  });

  it('ends a failed job with its failed row, and a snoozed run with its snoozed row', async () => {
    const failed = await finished((await worker.queue.enqueue('log.fails', {})).id);
    expect(failed.status).toBe(JobStatus.Failed);
    expect(shape(await wholeLog(failed))).toEqual([
      ['claimed', 1, null],
      ['failed', 1, 'Error: it broke'],
    ]);
    const snoozed = await finished((await worker.queue.enqueue('log.snoozes-once', {})).id);
    expect(snoozed.status).toBe(JobStatus.Completed);
    // The snooze gave its attempt back: the next run is attempt 1 again, and logs nothing itself.
    expect(shape(await wholeLog(snoozed))).toEqual([
      ['claimed', 1, null],
      ['snoozed', 1, null],
    ]);
  });

  it('writes a plain completion no row by default, and its claimed and completed rows with logCompletedRuns', async () => {
    const plain = await finished((await worker.queue.enqueue('log.plain', {})).id);
    expect(await wholeLog(plain)).toEqual([]);
    const full = await finished((await fullLog.queue.enqueue('log.plain-full', {})).id);
    expect(shape(await wholeLog(full))).toEqual([
      ['claimed', 1, null],
      ['completed', 1, null],
    ]);
  });

  it('keeps at most maxLogRowsPerJob rows of lines, and a last row says how many were dropped', async () => {
    const job = await finished((await worker.queue.enqueue('log.many', { lines: 50 })).id);
    const rows = await wholeLog(job);
    const lines = rows.filter((row) => row.kind === 'log');
    // The claimed row and the lines fill the bound; the dropped row and the outcome come after.
    expect(lines.map((row) => row.message)).toEqual(
      Array.from({ length: MAX_LOG_ROWS - 1 }, (_, i) => `line ${i + 1}`),
    );
    expect(rows.map((row) => row.kind)).toEqual([
      'claimed',
      ...lines.map(() => 'log'),
      'dropped',
      'completed',
    ]);
    const dropped = rows.find((row) => row.kind === 'dropped')!;
    expect(dropped.data).toEqual({ dropped: 50 - (MAX_LOG_ROWS - 1) });
    expect(dropped.message).toContain(`${50 - (MAX_LOG_ROWS - 1)} log row(s) dropped`);
  });

  it('writes a line while the job runs, and nothing of a run once it was cancelled (superseded)', async () => {
    const job = await worker.queue.enqueue('log.outlives-cancel', {});
    await waitFor(
      async () => (await worker.queue.jobEvents(job.id)).some((row) => row.kind === 'log'),
      { description: 'the line logged before the cancel to be written' },
    );
    const running = worker.app.get(RunningJobs);
    const fencedBefore = running.superseded.byKind.outcome;
    await worker.queue.cancel(job.id);
    handlers.gate.open();
    // The run's outcome carries its last line; once it was refused, nothing more will land.
    await waitFor(() => running.superseded.byKind.outcome === fencedBefore + 1, {
      description: 'the cancelled run to end with an outcome that changed nothing',
    });
    expect(shape(await wholeLog(await worker.queue.getJob(job.id)))).toEqual([
      ['claimed', 1, null],
      ['log', 1, 'before the cancel'],
      ['cancelled', 1, null],
    ]);
  });

  it('refuses a bad line at once, naming the field and quoting none of it', async () => {
    const job = await finished((await worker.queue.enqueue('log.bad-lines', {})).id);
    expect(handlers.refused.map((refusal) => refusal.field)).toEqual([
      'message',
      'message',
      'message',
      'data.f',
      'data',
    ]);
    for (const refusal of handlers.refused) {
      expect(refusal.message).not.toContain(SECRET_LINE);
      expect(JSON.stringify(refusal.value)).not.toContain(SECRET_LINE);
    }
    expect(shape(await wholeLog(job))).toEqual([
      ['claimed', 1, null],
      ['log', 1, 'the one good line'],
      ['completed', 1, null],
    ]);
    expect(logger.matching(new RegExp(SECRET_LINE))).toEqual([]);
  });

  it("deletes a job's log with the job", async () => {
    const job = await finished((await worker.queue.enqueue('log.many', { lines: 3 })).id);
    expect((await wholeLog(job)).length).toBe(5);
    expect(await worker.queue.prune({ olderThanMs: 0, types: ['log.many'] })).toBeGreaterThan(0);
    await expect(worker.queue.jobEvents(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
    const [{ left }] = await worker.dataSource.query(
      `SELECT count(*)::int AS left FROM job_queue.job_events WHERE job_id = $1`,
      [job.id],
    );
    expect(left).toBe(0);
  });
});

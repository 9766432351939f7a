import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { finishJobs, JobOutcome } from '../../libs/job-queue/src/sql/finish-jobs.query';
import { heartbeatJobs } from '../../libs/job-queue/src/sql/heartbeat-jobs.query';
import { RunWrite, updateRunProgress } from '../../libs/job-queue/src/sql/update-progress.query';
import { JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

const WORKER = 'worker-a';

/**
 * Every write that belongs to a run names the run's fencing token: it lands only while the job
 * is held by that very run. Run 1 of a job now held by run 2 (on the same worker: cancelled,
 * retried and claimed again), or of a job no longer held at all, changes nothing.
 */
describe('writes of a run are fenced by its token', () => {
  const app = useQueueTestingModule();

  /** A job held by `WORKER`, its current run's token `token`, in `status`. */
  async function heldJob(token: number, status = 'running'): Promise<string> {
    const [{ id }] = await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, status, worker_id, attempts, run_token, claimed_at,
                         heartbeat_at, progress, current_stage)
       VALUES ('fenced', $1, $2, 1, $3, now() - interval '1 minute',
               now() - interval '1 minute', 5, 'before')
       RETURNING id::text`,
      [status, WORKER, token],
    );
    return id;
  }

  const row = async (id: string) =>
    (
      await app.dataSource.query(
        `SELECT status, progress, current_stage, result, heartbeat_at > now() - interval '5 seconds'
                AS renewed
         FROM job_queue.jobs WHERE id = $1`,
        [id],
      )
    )[0];

  const progressOnly = (progress: number, stage: string): RunWrite => ({
    progress,
    stage,
    rows: [],
  });

  const outcome = (id: string, runToken: number, extra: Partial<JobOutcome> = {}): JobOutcome => ({
    id,
    runToken,
    status: JobStatus.Completed,
    resultJson: `{"run": ${runToken}}`,
    lastError: null,
    retryDelayMs: null,
    progress: null,
    stage: null,
    logRows: [],
    logOutcome: false,
    ...extra,
  });

  it('completes only with the current run’s outcome, and names the superseded ones', async () => {
    const id = await heldJob(2);
    expect(await finishJobs(app.dataSource, DEFAULT_SCHEMA, WORKER, [outcome(id, 1)])).toEqual([
      { id, run_token: 1 },
    ]);
    expect(await row(id)).toMatchObject({ status: 'running', result: null });

    // Both runs' outcomes in one batch: only the current one lands.
    expect(
      await finishJobs(app.dataSource, DEFAULT_SCHEMA, WORKER, [outcome(id, 1), outcome(id, 2)]),
    ).toEqual([{ id, run_token: 1 }]);
    expect(await row(id)).toMatchObject({ status: 'completed', result: { run: 2 } });
  });

  it('fences a failure or a retry with unwritten progress (the other shape of the write)', async () => {
    const id = await heldJob(2);
    const retry = outcome(id, 1, {
      status: JobStatus.Pending,
      resultJson: null,
      lastError: 'boom',
      retryDelayMs: 1_000,
      progress: 99,
      stage: 'late',
    });
    expect(await finishJobs(app.dataSource, DEFAULT_SCHEMA, WORKER, [retry])).toEqual([
      { id, run_token: 1 },
    ]);
    expect(await row(id)).toMatchObject({
      status: 'running',
      progress: 5,
      current_stage: 'before',
    });
    expect(
      await finishJobs(app.dataSource, DEFAULT_SCHEMA, WORKER, [{ ...retry, runToken: 2 }]),
    ).toEqual([]);
    // A retry with a delay waits as scheduled.
    expect(await row(id)).toMatchObject({
      status: 'scheduled',
      progress: 99,
      current_stage: 'late',
    });
  });

  it('writes the progress of the current run only, and of none once the job is not held', async () => {
    const id = await heldJob(2);
    expect(
      await updateRunProgress(app.dataSource, DEFAULT_SCHEMA, id, 1, progressOnly(50, 'run 1')),
    ).toBe(false);
    expect(await row(id)).toMatchObject({ progress: 5, current_stage: 'before' });
    expect(
      await updateRunProgress(app.dataSource, DEFAULT_SCHEMA, id, 2, progressOnly(60, 'run 2')),
    ).toBe(true);
    expect(await row(id)).toMatchObject({ progress: 60, current_stage: 'run 2' });

    await app.queue.cancel(id);
    expect(
      await updateRunProgress(app.dataSource, DEFAULT_SCHEMA, id, 2, progressOnly(70, 'run 2')),
    ).toBe(false);
    expect(await row(id)).toMatchObject({ status: 'cancelled', progress: 60 });
  });

  it('renews the lease of the current run only, and answers with the runs still held', async () => {
    const current = await heldJob(2);
    const cancelled = await heldJob(1, 'cancelled');
    const { held, paused } = await heartbeatJobs(app.dataSource, DEFAULT_SCHEMA, WORKER, [
      { id: current, token: 1 },
      { id: current, token: 2 },
      { id: cancelled, token: 1 },
    ]);
    expect([...held]).toEqual([`${current}:2`]);
    expect(paused.size).toBe(0);
    expect(await row(current)).toMatchObject({ renewed: true });
    expect(await row(cancelled)).toMatchObject({ renewed: false });
  });
});

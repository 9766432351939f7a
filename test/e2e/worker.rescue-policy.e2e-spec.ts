import { JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import {
  BACKED_OFF_JOB,
  BACKED_OFF_POLICY,
  LAST_ATTEMPT_JOB,
  RescueHandlers,
} from '../fixtures/rescue.handlers';

const RESCUER_STALE_AFTER_MS = 1_000;

interface Row {
  status: string;
  attempts: number;
  worker_id: string | null;
  last_error: string | null;
  /** run_at minus the rescue's now() (its updated_at), in ms. */
  delay_ms: number;
}

/**
 * The attempt limit and backoff of a job are its row's, fixed when a node that has its handler
 * first claimed it: the reaper of a node WITHOUT that handler (other defaults, no registry entry)
 * still fails a job out of attempts and holds one with attempts left back for its backoff.
 */
describe('reaper: a node without the handler applies the row’s policy', () => {
  let holder: WorkerApp;
  let handlers: RescueHandlers;

  const file = useWorkerTestFile({ beforeClose: () => handlers?.gate.open() });

  beforeAll(async () => {
    // Claims and then hangs: no heartbeat for a minute, no reaping of its own.
    holder = await file.start({
      queueOptions: {
        heartbeatIntervalMs: 60_000,
        staleAfterMs: 180_000,
        shutdownTimeoutMs: 1_000,
        worker: { concurrency: 4, pollIntervalMs: 20 },
      },
      providers: [RescueHandlers],
    });
    handlers = holder.app.get(RescueHandlers);
  });

  const row = async (id: string): Promise<Row> => {
    const [found] = await holder.dataSource.query(
      `SELECT status, attempts, worker_id, last_error,
              (extract(epoch FROM run_at - updated_at) * 1000)::float8 AS delay_ms
       FROM job_queue.jobs WHERE id = $1`,
      [id],
    );
    return found;
  };

  it('fails the job on its last attempt and backs off the other, by the row’s values', async () => {
    const last = await holder.queue.enqueue(LAST_ATTEMPT_JOB, {});
    const backedOff = await holder.queue.enqueue(BACKED_OFF_JOB, {});
    await waitFor(() => handlers.starts.length === 2, { description: 'both jobs to start' });

    // A node with no handler at all, and defaults that differ from the handlers' options.
    await file.start({
      queueOptions: {
        staleAfterMs: RESCUER_STALE_AFTER_MS,
        reaperIntervalMs: 100,
        defaultMaxAttempts: 5,
        backoff: { baseDelayMs: 10, maxDelayMs: 10, jitter: 0 },
        worker: { concurrency: 1, pollIntervalMs: 20 },
      },
    });

    const lastRow = await waitFor(
      async () => {
        const found = await row(last.id);
        return found.worker_id === null ? found : undefined;
      },
      { description: `the reaper to take job ${last.id} back` },
    );
    expect(lastRow).toMatchObject({ status: JobStatus.Failed, attempts: 1 });
    expect(lastRow.last_error).toMatch(/stopped heartbeating during attempt 1, the last one/);

    const backedOffRow = await waitFor(
      async () => {
        const found = await row(backedOff.id);
        return found.worker_id === null ? found : undefined;
      },
      { description: `the reaper to take job ${backedOff.id} back` },
    );
    // Backed off: scheduled until its run_at.
    expect(backedOffRow).toMatchObject({ status: JobStatus.Scheduled, attempts: 1 });
    const { baseDelayMs, jitter } = BACKED_OFF_POLICY;
    expect(backedOffRow.delay_ms).toBeGreaterThanOrEqual(baseDelayMs * (1 - jitter) - 1);
    expect(backedOffRow.delay_ms).toBeLessThanOrEqual(baseDelayMs * (1 + jitter) + 1);
    // Not run again meanwhile.
    expect(handlers.starts).toHaveLength(2);
  });
});

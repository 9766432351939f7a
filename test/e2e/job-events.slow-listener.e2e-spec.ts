import { useWorkerTestFile } from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { CapturingLogger } from '../support/capturing-logger';
import { EventsHandlers, GatedListener, ThrowingListener } from '../fixtures/events.handlers';
import { JobEventDispatcher } from '../../libs/job-queue/src/events/job-event-dispatcher';

const JOBS = 2_000;
const BUFFER_SIZE = 100;

/**
 * Listeners never hold up the worker: one whose promise settles only after every job of a batch
 * of 2,000 has completed, and one that throws on every event. All jobs complete; the events the
 * buffer had no room for are dropped, counted and logged a few times, not once per event.
 */
describe('job events: a slow listener and a throwing one', () => {
  const file = useWorkerTestFile({ beforeClose: () => gated?.gate.open() });
  const logger = new CapturingLogger();
  let gated: GatedListener | undefined;

  it('completes all 2,000 jobs; the drops are counted and logged once per period', async () => {
    const app = await file.start({
      queueOptions: {
        worker: { concurrency: 50, pollIntervalMs: 100 },
        events: { bufferSize: BUFFER_SIZE },
      },
      providers: [EventsHandlers, GatedListener, ThrowingListener],
      logger,
    });
    const listener = app.app.get(GatedListener);
    gated = listener;
    const throwing = app.app.get(ThrowingListener);
    const dispatcher = app.app.get(JobEventDispatcher);
    await app.queue.enqueueMany(
      Array.from({ length: JOBS }, (_, n) => ({ type: 'events.noop', data: { n } })),
    );
    await waitFor(
      async () => {
        const [{ done }] = await app.dataSource.query(
          `SELECT count(*)::int AS done FROM job_queue.jobs WHERE status = 'completed'`,
        );
        return done === JOBS;
      },
      { timeoutMs: 60_000, description: 'all 2,000 jobs to complete' },
    );
    // The gated listener still holds its first event: the worker finished without it.
    expect(listener.calls).toBe(1);
    expect(dispatcher.dropped).toBeGreaterThan(0);
    listener.gate.open();
    await waitFor(() => dispatcher.size === 0, { description: 'the buffer to empty' });
    const dropLines = logger.matching(/^Dropped \d+ job event/);
    const logged = dropLines.reduce(
      (sum, line) => sum + Number(/^Dropped (\d+)/.exec(line.message)![1]),
      0,
    );
    expect(logged).toBe(dispatcher.dropped);
    expect(dropLines.length).toBeLessThanOrEqual(8);
    expect(throwing.calls).toBeGreaterThan(0);
    const failureLines = logger.matching(/^@OnJobEvent ThrowingListener#fail failed/);
    expect(failureLines.length).toBeGreaterThan(0);
    expect(failureLines.length).toBeLessThanOrEqual(8);
  });
});

import { useWorkerTestFile } from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { CapturingLogger } from '../support/capturing-logger';
import { EventRecorder } from '../fixtures/event-recorder';
import { EventsHandlers } from '../fixtures/events.handlers';

/**
 * A worker that does not LISTEN (`worker.listen: false`, as behind PgBouncer in transaction
 * mode): its listeners still hear of its own jobs, it opens no LISTEN connection for events, and
 * its boot says that other processes' events are not heard.
 */
describe('job events with LISTEN off', () => {
  const file = useWorkerTestFile();
  const logger = new CapturingLogger();

  it('delivers local events only, and the boot says so', async () => {
    const app = await file.start({
      queueOptions: { worker: { listen: false, pollIntervalMs: 50 }, events: { remote: true } },
      providers: [EventsHandlers, EventRecorder],
      logger,
    });
    expect(logger.matching(/^Job events: .*worker\.listen is false/)).toHaveLength(1);
    const recorder = app.app.get(EventRecorder);
    const job = await app.queue.enqueue('events.ok', {});
    const seen = await waitFor(() =>
      recorder.of(job.id).includes('completed:completed:1') ? recorder.of(job.id) : undefined,
    );
    expect(seen).toEqual(['started:running:1', 'completed:completed:1']);
    const [{ n }] = await app.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`,
      [`nest-pg-job-queue job-events ${app.workerId}`],
    );
    expect(n).toBe(0);
  });
});

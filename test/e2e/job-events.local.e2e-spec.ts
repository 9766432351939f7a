import { JobEvent } from 'nest-pg-job-queue';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { EventRecorder } from '../fixtures/event-recorder';
import { EventsHandlers } from '../fixtures/events.handlers';

/**
 * One process that runs its jobs and listens to their events: each event comes from where the
 * worker learns of it (the executor, the progress write, the outcome write, cancel()), once,
 * although the same statements NOTIFY the events channel this process also LISTENs to.
 */
describe('job events of jobs this process runs', () => {
  const file = useWorkerTestFile();
  let app: WorkerApp;
  let recorder: EventRecorder;

  const eventsOf = (id: string, last: string) =>
    waitFor(() => (recorder.of(id).includes(last) ? recorder.of(id) : undefined), {
      description: `job ${id}'s ${last} event`,
    });

  beforeAll(async () => {
    app = await file.start({
      // Remote events on: the process also hears its own NOTIFYs, and must not deliver twice.
      queueOptions: { worker: { pollIntervalMs: 100 }, events: { remote: true } },
      providers: [EventsHandlers, EventRecorder],
    });
    recorder = app.app.get(EventRecorder);
  });

  it('retried then completed, with its progress', async () => {
    const job = await app.queue.enqueue('events.flaky', {});
    expect(await eventsOf(job.id, 'completed:completed:2')).toEqual([
      'started:running:1',
      'retrying:pending:1',
      'started:running:2',
      'progress:running:2',
      'completed:completed:2',
    ]);
    const completed = recorder.events.find(
      (event) => event.id === job.id && event.event === 'completed',
    );
    expect(completed).toEqual<JobEvent>({
      event: 'completed',
      id: job.id,
      type: 'events.flaky',
      status: 'completed' as JobEvent['status'],
      attempt: 2,
      progress: 50,
      stage: 'halfway',
    });
  });

  it('failed for good', async () => {
    const job = await app.queue.enqueue('events.bad', {});
    expect(await eventsOf(job.id, 'failed:failed:1')).toEqual([
      'started:running:1',
      'failed:failed:1',
    ]);
  });

  it('cancelled while running', async () => {
    const job = await app.queue.enqueue('events.until-cancelled', {});
    await eventsOf(job.id, 'started:running:1');
    await app.queue.cancel(job.id);
    expect(await eventsOf(job.id, 'cancelled:cancelled:1')).toEqual([
      'started:running:1',
      'cancelled:cancelled:1',
    ]);
  });

  it('snoozed (the attempt given back), then completed', async () => {
    const job = await app.queue.enqueue('events.snoozy', {});
    expect(await eventsOf(job.id, 'completed:completed:1')).toEqual([
      'started:running:1',
      'snoozed:pending:0',
      'started:running:1',
      'completed:completed:1',
    ]);
  });

  it('progress from QueueService.updateProgress', async () => {
    const job = await app.queue.enqueue('events.nobody-handles-this', {});
    await app.queue.updateProgress(job.id, 30, 'by hand');
    await eventsOf(job.id, 'progress:pending:0');
    expect(recorder.events.find((event) => event.id === job.id)).toMatchObject({
      progress: 30,
      stage: 'by hand',
    });
  });

  it('delivered each event once', () => {
    // The snoozed job starts twice as attempt 1 (its snooze gave the attempt back): left out.
    const keys = recorder.events
      .filter((e) => e.type !== 'events.snoozy')
      .map((e) => `${e.id}:${e.event}:${e.attempt}:${e.status}`);
    expect(keys).toHaveLength(10); // 5 + 2 + 2 + 1 events of the tests above
    expect(new Set(keys).size).toBe(keys.length);
  });
});

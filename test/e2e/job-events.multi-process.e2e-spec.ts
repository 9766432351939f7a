import { JobEvent } from 'nest-pg-job-queue';
import {
  ChildWorkers,
  CREATE_JOB_RUNS_TABLE,
  WorkerProcess,
  WorkerProcessConfig,
} from '../support/child-workers';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { waitFor } from '../support/wait-for';
import { EventRecorder } from '../fixtures/event-recorder';

const BOOT_DEADLINE_MS = 30_000;
const EVENT_FIELDS = ['attempt', 'event', 'id', 'progress', 'stage', 'status', 'type'];

/**
 * Two processes: a worker child process runs the jobs, and this one, enqueue-only
 * (`worker: false`), hears their events through LISTEN/NOTIFY with `@OnJobEvent`: each event
 * once, in order per job, ids and states only. A second worker process takes over the job of the
 * first once it is killed: the rescue is its event.
 */
describe('job events across processes', () => {
  const children = new ChildWorkers();
  const file = useWorkerTestFile({ beforeClose: () => children.killAll() });
  let listener: WorkerApp;
  let recorder: EventRecorder;
  let first: WorkerProcess;

  const worker = (workerId: string, extra: Partial<WorkerProcessConfig> = {}) => ({
    databaseUrl: file.url,
    workerId,
    pollIntervalMs: 100,
    staleAfterMs: 2_000,
    heartbeatIntervalMs: 300,
    reaperIntervalMs: 300,
    remoteEvents: true,
    ...extra,
  });

  const eventsOf = (id: string, last: string) =>
    waitFor(() => (recorder.of(id).includes(last) ? recorder.of(id) : undefined), {
      timeoutMs: 30_000,
      description: `job ${id}'s ${last} event`,
    });

  beforeAll(async () => {
    listener = await file.start({
      queueOptions: { worker: false, events: { remote: true } },
      providers: [EventRecorder],
    });
    recorder = listener.app.get(EventRecorder);
    await listener.dataSource.query(CREATE_JOB_RUNS_TABLE);
    [first] = await children.spawnReady(
      [
        worker('events-worker-1', {
          slowMs: 'until-aborted',
          jobTypes: ['flaky', 'doomed', 'slow'],
        }),
      ],
      BOOT_DEADLINE_MS,
    );
  }, 60_000);

  it('a job that fails once then completes: started, retrying, started, progress, completed', async () => {
    const job = await listener.queue.enqueue('flaky', { secret: 'not in events' });
    expect(await eventsOf(job.id, 'completed:completed:2')).toEqual([
      'started:running:1',
      'retrying:pending:1',
      'started:running:2',
      'progress:running:2',
      'completed:completed:2',
    ]);
    const events = recorder.events.filter((event) => event.id === job.id);
    for (const event of events) expect(Object.keys(event).sort()).toEqual(EVENT_FIELDS);
    expect(JSON.stringify(events)).not.toContain('not in events');
    expect(events.find((event) => event.event === 'progress')).toMatchObject({
      type: 'flaky',
      progress: 50,
      stage: 'halfway',
    });
  });

  it('a job that fails every attempt: started, retrying, started, failed', async () => {
    const job = await listener.queue.enqueue('doomed', {});
    expect(await eventsOf(job.id, 'failed:failed:2')).toEqual([
      'started:running:1',
      'retrying:pending:1',
      'started:running:2',
      'failed:failed:2',
    ]);
  });

  it('a job cancelled while it runs: started (remote), cancelled (this process)', async () => {
    const job = await listener.queue.enqueue('slow', {});
    await eventsOf(job.id, 'started:running:1');
    await listener.queue.cancel(job.id);
    expect(await eventsOf(job.id, 'cancelled:cancelled:1')).toEqual([
      'started:running:1',
      'cancelled:cancelled:1',
    ]);
  });

  it('a job rescued after its worker is killed: started, rescued, started, completed', async () => {
    const job = await listener.queue.enqueue('slow', {});
    await eventsOf(job.id, 'started:running:1');
    first.kill('SIGKILL');
    await first.exited;
    await children.spawnReady(
      [worker('events-worker-2', { jobTypes: ['slow'] })],
      BOOT_DEADLINE_MS,
    );
    const seen = await eventsOf(job.id, 'completed:completed:2');
    expect(seen[0]).toBe('started:running:1');
    expect(seen[1]).toMatch(/^rescued:(scheduled|pending):1$/);
    expect(seen.slice(2)).toEqual(['started:running:2', 'completed:completed:2']);
  });

  it('delivered each event once (no job has an event twice)', () => {
    const keys = recorder.events.map((e: JobEvent) => `${e.id}:${e.event}:${e.attempt}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

import { Logger } from '@nestjs/common';
import { JobEvent, JobStatus } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import { JobEventListenerRegistry } from '../../libs/job-queue/src/discovery/job-event-listener.registry';
import { JobEventDispatcher } from '../../libs/job-queue/src/events/job-event-dispatcher';
import { JobEventStream } from '../../libs/job-queue/src/events/job-event-stream';
import { RemoteJobEvents } from '../../libs/job-queue/src/events/remote-job-events';
import { Gate } from '../support/gate';
import { CapturingLogger } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';

const event = (id: number, name: JobEvent['event'] = 'completed'): JobEvent => ({
  event: name,
  id: String(id),
  type: 't',
  status: JobStatus.Completed,
  attempt: 1,
  progress: 0,
  stage: null,
});

/** The dispatcher alone: a registry of test listeners, a buffer of 3, no stream behind it. */
function dispatcherWith(listeners: Array<(event: JobEvent) => unknown>, bufferSize = 3) {
  const registry = new JobEventListenerRegistry();
  listeners.forEach((run, i) =>
    registry.add({
      name: `L#${i}`,
      events: new Set(['completed', 'started']),
      types: undefined,
      run,
    }),
  );
  const options = resolveJobQueueOptions({ events: { bufferSize } });
  const dispatcher = new JobEventDispatcher(
    options,
    registry,
    {} as JobEventStream,
    {} as RemoteJobEvents,
  );
  return dispatcher;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('JobEventDispatcher', () => {
  const logger = new CapturingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  afterAll(() => Logger.overrideLogger(new Logger()));
  beforeEach(() => logger.lines.splice(0));

  it('calls each listener once per event, in order, awaiting each', async () => {
    const seen: string[] = [];
    const dispatcher = dispatcherWith([
      async (e) => {
        await settle();
        seen.push(`a${e.id}`);
      },
      (e) => void seen.push(`b${e.id}`),
    ]);
    dispatcher.push([event(1), event(2)]);
    await waitFor(() => seen.length === 4, { intervalMs: 1 });
    expect(seen).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('drops what the buffer has no room for, counts it and logs it once per period', async () => {
    const gate = new Gate();
    const dispatcher = dispatcherWith([() => gate.wait()]);
    // The first event is taken out at once (its listener waits), then 3 fit and 96 do not.
    for (let n = 0; n < 100; n++) dispatcher.push([event(n)]);
    expect(dispatcher.dropped).toBe(96);
    const warned = logger.matching(/^Dropped/);
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(/^Dropped 1 job event/);
    gate.open();
    await waitFor(() => logger.matching(/^Dropped/).length === 2, { intervalMs: 1 });
    expect(dispatcher.size).toBe(0);
    // The rest of the burst is told once the buffer has emptied.
    const lines = logger.matching(/^Dropped/);
    expect(lines).toHaveLength(2);
    expect(lines[1].message).toMatch(/^Dropped 95 job event/);
  });

  it('logs a listener that throws or rejects, and goes on', async () => {
    const seen: string[] = [];
    const dispatcher = dispatcherWith(
      [
        () => {
          throw new Error('sync');
        },
        () => Promise.reject(new Error('async')),
        (e) => void seen.push(e.id),
      ],
      10,
    );
    dispatcher.push([event(1), event(2)]);
    await waitFor(() => seen.length === 2, { intervalMs: 1 });
    expect(seen).toEqual(['1', '2']);
    const failures = logger.matching(
      /^@OnJobEvent L#0 failed on completed of job 1 \(Error: sync\)/,
    );
    expect(failures).toHaveLength(1);
    // Four failures, one line: the rest are counted for the next one.
    expect(logger.matching(/^@OnJobEvent/)).toHaveLength(1);
  });

  it('buffers nothing for an event without listeners', () => {
    const dispatcher = dispatcherWith([() => new Promise(() => undefined)], 1);
    dispatcher.push([event(1, 'progress'), event(2, 'progress'), event(3, 'progress')]);
    expect(dispatcher.dropped).toBe(0);
    expect(dispatcher.size).toBe(0);
  });
});

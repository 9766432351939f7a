import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobEvent } from '../interfaces/job-event.interface';
import {
  JobEventListenerRegistry,
  RegisteredJobEventListener,
} from '../discovery/job-event-listener.registry';
import { LogPeriod } from '../periodic/log-period';
import { JobEventStream } from './job-event-stream';
import { RemoteJobEvents } from './remote-job-events';

/** An event with the listeners it is for, waiting in the buffer. */
interface Delivery {
  event: JobEvent;
  listeners: RegisteredJobEventListener[];
}

/**
 * Calls the `@OnJobEvent` listeners, off the worker's path: the stream hands events over
 * synchronously into a buffer of at most `events.bufferSize`, and one loop takes them out in
 * order and awaits each listener in turn. A listener that throws (or rejects) is logged and the
 * next one runs; a slow one holds up delivery, never the worker: when the buffer is full, new
 * events are dropped, counted, and logged once per log period (`LogPeriod`) and once more when
 * the buffer has emptied.
 *
 * Subscribed from bootstrap to shutdown when the app has listeners, so its LISTEN connection
 * (see `RemoteJobEvents`) is held that long; with none, it does nothing. It stops after the
 * worker has drained (`onApplicationShutdown` follows every `beforeApplicationShutdown`), so the
 * last outcomes' events are delivered, for at most `shutdownTimeoutMs` more.
 */
@Injectable()
export class JobEventDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('JobQueue');
  private readonly buffer: Delivery[] = [];
  private head = 0;
  private running: Promise<void> | undefined;
  /** Set while `run` loops; cleared in the same turn as its last check, so no push is missed. */
  private looping = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  private droppedTotal = 0;
  private droppedUnlogged = 0;
  private readonly dropLog = new LogPeriod();
  private failedUnlogged = 0;
  private readonly failureLog = new LogPeriod();

  constructor(
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobEventListenerRegistry,
    private readonly stream: JobEventStream,
    private readonly remote: RemoteJobEvents,
  ) {}

  /** Events dropped so far because the buffer was full. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Events waiting for their listeners. */
  get size(): number {
    return this.buffer.length - this.head;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.registry.size === 0) return;
    this.unsubscribe = await this.stream.subscribe({ events: (events) => this.push(events) });
    if (this.remote.offBecause) {
      this.logger.log(
        `Job events: @OnJobEvent listeners hear only of jobs this process runs or acts on ` +
          `(${this.remote.offBecause}, so this process does not LISTEN for other processes' events)`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
    if (!this.looping) return;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.shutdownTimeoutMs);
    });
    await Promise.race([this.running, gaveUp]);
    clearTimeout(timer);
    if (this.size > 0) {
      this.logger.warn(`${this.size} job event(s) not delivered before shutdown`);
      this.buffer.length = 0;
      this.head = 0;
    }
  }

  /** What the stream hands over: buffered for their listeners, or dropped when full. */
  push(events: readonly JobEvent[]): void {
    for (const event of events) {
      const listeners = this.registry.matching(event);
      if (listeners.length === 0) continue;
      if (this.size >= this.options.events.bufferSize) {
        this.countDrop();
        continue;
      }
      this.buffer.push({ event, listeners });
    }
    if (!this.looping && this.size > 0) {
      this.looping = true;
      this.running = this.run();
    }
  }

  private countDrop(): void {
    this.droppedTotal++;
    this.droppedUnlogged++;
    if (this.dropLog.due()) this.logDrops();
  }

  private logDrops(): void {
    this.logger.warn(
      `Dropped ${this.droppedUnlogged} job event(s): @OnJobEvent listeners fell ` +
        `${this.options.events.bufferSize} events (events.bufferSize) behind ` +
        `(${this.droppedTotal} dropped in all)`,
    );
    this.droppedUnlogged = 0;
  }

  private async run(): Promise<void> {
    while (this.size > 0) {
      const { event, listeners } = this.buffer[this.head];
      this.buffer[this.head++] = undefined as unknown as Delivery;
      if (this.head > 1_024 && this.head * 2 > this.buffer.length) {
        this.buffer.splice(0, this.head);
        this.head = 0;
      }
      for (const listener of listeners) {
        try {
          await listener.run(event);
        } catch (error) {
          this.listenerFailed(listener, event, error);
        }
      }
    }
    this.buffer.length = 0;
    this.head = 0;
    this.looping = false;
    // The drops of a burst that ended between two due lines are still told.
    if (this.droppedUnlogged > 0) {
      this.logDrops();
      this.dropLog.reset();
    }
  }

  /** A listener's failure: its name and the event, never more (the error is the app's own). */
  private listenerFailed(listener: RegisteredJobEventListener, event: JobEvent, error: unknown) {
    this.failedUnlogged++;
    if (!this.failureLog.due()) return;
    const why = error instanceof Error ? `${error.name}: ${error.message}` : 'a non-error';
    this.logger.error(
      `@OnJobEvent ${listener.name} failed on ${event.event} of job ${event.id} (${why}); ` +
        `${this.failedUnlogged} listener failure(s) since the last line`,
    );
    this.failedUnlogged = 0;
  }
}

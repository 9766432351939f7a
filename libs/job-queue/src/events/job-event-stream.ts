import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobEvent } from '../interfaces/job-event.interface';
import { delivered, parseJobEventNotification } from './job-event-payload';
import { RemoteJobEvents } from './remote-job-events';

/** Who hears the stream: the `@OnJobEvent` dispatcher, and `waitForJob` while it waits. */
export interface JobEventTap {
  /** Synchronous and quick: it must not throw, and may not wait for anything. */
  events(events: readonly JobEvent[]): void;
  /** The LISTEN connection (re)connected: whatever was notified meanwhile was missed. */
  connected?(): void;
}

/**
 * This process's stream of job events: its own (`emit`, where it learns a transition happened:
 * a run started, a progress write or an outcome landed, a rescue, a cancel) and, through
 * `RemoteJobEvents`, those of statements other processes ran. The origin's workerId in each
 * notification tells the two apart: this process's own notifications are skipped, it delivered
 * those itself. So each event reaches each process once.
 *
 * Per job, events arrive in the order they happened: an event of this process is delivered after
 * a round trip on the LISTEN connection (`RemoteJobEvents.sync`), so that whatever other
 * processes committed before it (say, the `started` of a job this process then cancels) is
 * delivered first. The events of one turn of the event loop share one round trip.
 *
 * With no tap, nothing is built or delivered (a worker without listeners pays nothing here).
 */
@Injectable()
export class JobEventStream {
  private readonly logger = new Logger('JobQueue');
  private readonly taps = new Set<JobEventTap>();
  private readonly workerId: string;
  private pending: JobEvent[] = [];
  private flushScheduled = false;
  /** The last delivery of this process's own events: the next one follows it. */
  private ordered: Promise<void> = Promise.resolve();

  constructor(
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
    private readonly remote: RemoteJobEvents,
  ) {
    this.workerId = options.workerId;
    remote.onPayload = (payload) => this.fromRemote(payload);
    remote.onConnected = () => {
      for (const tap of this.taps) tap.connected?.();
    };
  }

  /** Someone listens: events are worth building. */
  get active(): boolean {
    return this.taps.size > 0;
  }

  /** Whether other processes' events arrive now (LISTEN is up). */
  get remoteConnected(): boolean {
    return this.remote.connected;
  }

  /**
   * Adds `tap` (the LISTEN connection opens for the first); resolves, with its removal, once the
   * connection is up or its first attempt failed (or remote events are off).
   */
  async subscribe(tap: JobEventTap): Promise<() => Promise<void>> {
    this.taps.add(tap);
    await this.remote.acquire();
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      this.taps.delete(tap);
      await this.remote.release();
    };
  }

  /** Events of transitions this process made or learnt of first (see the class). */
  emit(events: readonly JobEvent[]): void {
    if (!this.active || events.length === 0) return;
    this.pending.push(...events);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      const batch = this.pending;
      this.pending = [];
      const synced = this.remote.sync();
      this.ordered = Promise.all([this.ordered, synced]).then(() => this.deliver(batch));
    });
  }

  private fromRemote(payload: string | undefined): void {
    const notification = parseJobEventNotification(payload);
    if (!notification || notification.origin === this.workerId) return;
    this.deliver(notification.events);
  }

  private deliver(events: readonly JobEvent[]): void {
    const all = events.flatMap(delivered);
    for (const tap of this.taps) {
      try {
        tap.events(all);
      } catch (error) {
        // A tap is the library's own and must not throw; if one does, the others still hear.
        this.logger.error(`A job event tap threw: ${(error as Error)?.stack ?? String(error)}`);
      }
    }
  }
}

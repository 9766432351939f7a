import { Injectable } from '@nestjs/common';
import { JobEvent, JobEventName } from '../interfaces/job-event.interface';

/** One `@OnJobEvent` method, bound to its provider. */
export interface RegisteredJobEventListener {
  /** `Class#method`, for messages. */
  name: string;
  events: ReadonlySet<JobEventName>;
  /** `undefined`: every type. */
  types: ReadonlySet<string> | undefined;
  run: (event: JobEvent) => unknown;
}

/** The `@OnJobEvent` methods of this app, filled by the explorer at module init. */
@Injectable()
export class JobEventListenerRegistry {
  private readonly listeners: RegisteredJobEventListener[] = [];

  add(listener: RegisteredJobEventListener): void {
    this.listeners.push(listener);
  }

  get size(): number {
    return this.listeners.length;
  }

  /** The listeners of `event`, in discovery order. */
  matching(event: JobEvent): RegisteredJobEventListener[] {
    return this.listeners.filter(
      (listener) =>
        listener.events.has(event.event) && (!listener.types || listener.types.has(event.type)),
    );
  }
}

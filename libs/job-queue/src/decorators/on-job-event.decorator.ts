import { SetMetadata } from '@nestjs/common';
import { JOB_EVENT_METADATA } from '../job-queue.constants';
import { JobEventName, OnJobEventOptions } from '../interfaces/job-event.interface';

/** What `@OnJobEvent` records on a method. */
export interface JobEventListenerMetadata {
  events: JobEventName[];
  options: OnJobEventOptions;
}

/**
 * Marks a provider method as a listener of job events: it is called as `method(event)` with a
 * `JobEvent` (ids and states, never `data` or `result`) for each job that goes through one of
 * `event`, in every process that imports the module, `worker: false` included: for jobs this
 * process runs or acts on at once, for jobs of other processes through LISTEN/NOTIFY (module
 * option `events.remote`). Listeners run off the worker's path, one event at a time, awaited;
 * one that throws is logged, one that is slow makes events wait in a bounded buffer.
 * Checked at boot: an unknown event name fails it.
 *
 * @param event the event, or events, to listen to
 * @param options `type`: only jobs of this type (or these types)
 * @publicApi
 */
export function OnJobEvent(
  event: JobEventName | JobEventName[],
  options: OnJobEventOptions = {},
): MethodDecorator {
  return SetMetadata<string, JobEventListenerMetadata>(JOB_EVENT_METADATA, {
    events: Array.isArray(event) ? [...event] : [event],
    options,
  });
}

import { JOB_EVENT_NAMES } from '../job-queue.constants';
import { JobStatus } from '../entities/job-status.enum';
import { JobEvent, JobEventName } from '../interfaces/job-event.interface';

/** The fields of a job that an event carries, under their `Job` names. */
export interface JobEventSubject {
  id: string;
  jobType: string;
  status: JobStatus | string;
  attempts: number;
  progress: number;
  currentStage: string | null;
}

/** The event `event` of `job` as it is right after the transition. */
export function jobEvent(event: JobEventName, job: JobEventSubject): JobEvent {
  return {
    event,
    id: String(job.id),
    type: job.jobType,
    status: job.status as JobStatus,
    attempt: job.attempts,
    progress: job.progress,
    stage: job.currentStage,
  };
}

/**
 * What listeners get for `event`: a rescue on a job's last attempt is also its `failed` event
 * (the job is finished), so a listener of `failed` hears of every job that failed for good.
 */
export function delivered(event: JobEvent): JobEvent[] {
  if (event.event === 'rescued' && event.status === JobStatus.Failed) {
    return [event, { ...event, event: 'failed' }];
  }
  return [event];
}

/** One notification of the events channel, read (see sql/job-events.notify.ts). */
export interface JobEventNotification {
  /** The workerId of the process whose statement sent it. */
  origin: string;
  events: JobEvent[];
}

type Item = [string, string, string, number, number, string | null, string];

function isItem(value: unknown): value is Item {
  return (
    Array.isArray(value) &&
    value.length === 7 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    typeof value[2] === 'string' &&
    typeof value[3] === 'number' &&
    typeof value[4] === 'number' &&
    (value[5] === null || typeof value[5] === 'string') &&
    JOB_EVENT_NAMES.includes(value[6] as string)
  );
}

/**
 * Reads a payload of the events channel; `undefined` when it is not one of ours (anyone who can
 * connect may NOTIFY any channel): items that are not well formed are skipped.
 */
export function parseJobEventNotification(
  payload: string | undefined,
): JobEventNotification | undefined {
  if (!payload) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const { o: origin, e: items } = (parsed ?? {}) as { o?: unknown; e?: unknown };
  if (typeof origin !== 'string' || !Array.isArray(items)) return undefined;
  const events = items
    .filter(isItem)
    .map(([id, type, status, attempt, progress, stage, event]): JobEvent => ({
      event: event as JobEventName,
      id,
      type,
      status: status as JobStatus,
      attempt,
      progress,
      stage,
    }));
  return { origin, events };
}

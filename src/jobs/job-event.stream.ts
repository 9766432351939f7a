import { Injectable } from '@nestjs/common';
import { Observable, Subject, filter, takeWhile } from 'rxjs';
import { JobEvent, JobEventName, OnJobEvent } from 'nest-pg-job-queue';

/** Every event a job can go through; the last three end it. */
const EVERY_EVENT: JobEventName[] = [
  'started',
  'progress',
  'retrying',
  'snoozed',
  'rescued',
  'completed',
  'failed',
  'cancelled',
];

/** The statuses a job ends in: no event comes after them. */
export const FINAL_STATUSES = new Set<string>(['completed', 'failed', 'cancelled']);

/**
 * The queue's job events as one stream in this process, for routes that follow a job (the
 * `GET /jobs/:id/events` Server-Sent Events). `@OnJobEvent` delivers every job's events here,
 * those this process runs and, through LISTEN/NOTIFY, those other instances run.
 */
@Injectable()
export class JobEventStream {
  private readonly events = new Subject<JobEvent>();
  private following = 0;

  @OnJobEvent(EVERY_EVENT)
  relay(event: JobEvent): void {
    this.events.next(event);
  }

  /** One job's events from now on, ending with (and including) its final one. */
  of(id: string): Observable<JobEvent> {
    const events = this.events.pipe(
      filter((event) => event.id === id),
      takeWhile((event) => !FINAL_STATUSES.has(event.status), true),
    );
    return new Observable<JobEvent>((subscriber) => {
      this.following += 1;
      const subscription = events.subscribe(subscriber);
      return () => {
        this.following -= 1;
        subscription.unsubscribe();
      };
    });
  }

  /** How many subscriptions follow a job now: a client that disconnects releases its own. */
  get followers(): number {
    return this.following;
  }
}

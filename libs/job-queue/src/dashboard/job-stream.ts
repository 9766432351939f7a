import type { MessageEvent } from '@nestjs/common';
import { Observable } from 'rxjs';
import { Job } from '../entities/job.entity';
import { JobNotFoundError, JobQueueUnavailableError } from '../errors';
import type { QueueService } from '../queue.service';
import { isFinished } from './pages/job.page';

/** How often a stream reads its job again. */
export const STREAM_POLL_MS = 500;
/** Log rows read per poll, at most (more are read at the next one). */
const LOG_ROWS_PER_POLL = 200;

/** What the page shows of a job that changes while it runs. */
function jobState(job: Job) {
  return {
    status: job.status,
    stage: job.currentStage,
    progress: job.progress,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    lastError: job.lastError,
    unfinishedDependencies: job.unfinishedDependencies,
  };
}

/**
 * One job followed for a page: `job` (its state, when it changed), `log` (each new row of its
 * log, after `after`), and `end` once it is finished (its state and result; `{}` when it is
 * gone), and then the stream completes.
 * It reads the job every `STREAM_POLL_MS`: what any node did shows, with no LISTEN connection
 * per viewer, and a poll never overlaps the previous one. A client that leaves unsubscribes,
 * which stops the polling.
 */
export function followJob(
  queue: QueueService,
  id: string,
  after: string | undefined,
  pollMs = STREAM_POLL_MS,
): Observable<MessageEvent> {
  return new Observable<MessageEvent>((subscriber) => {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let lastState = '';
    let lastEventId = after;
    let last: Job | undefined;

    const poll = async (): Promise<boolean> => {
      const job = await queue.getJob(id);
      last = job;
      for (;;) {
        const rows = await queue.jobEvents(id, { after: lastEventId, limit: LOG_ROWS_PER_POLL });
        for (const row of rows) {
          subscriber.next({ type: 'log', id: row.id, data: row });
          lastEventId = row.id;
        }
        if (rows.length < LOG_ROWS_PER_POLL || stopped) break;
      }
      const state = JSON.stringify(jobState(job));
      if (state !== lastState) subscriber.next({ type: 'job', data: state });
      lastState = state;
      return isFinished(job);
    };

    const tick = async (): Promise<void> => {
      let finished = false;
      try {
        finished = await poll();
      } catch (error) {
        if (error instanceof JobNotFoundError) {
          finished = true; // pruned while followed: nothing more will come
        } else if (!(error instanceof JobQueueUnavailableError)) {
          subscriber.error(error);
          return;
        } // the database is away for now: read again at the next tick
      }
      if (stopped) return;
      if (finished) {
        const end = last && isFinished(last) ? { ...jobState(last), result: last.result } : {};
        subscriber.next({ type: 'end', data: end });
        subscriber.complete();
        return;
      }
      timer = setTimeout(() => void tick(), pollMs);
    };

    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  });
}

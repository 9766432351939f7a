import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  RESOLVED_JOB_QUEUE_OPTIONS,
  WAIT_POLL_WITH_LISTEN_MS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { Job } from '../entities/job.entity';
import { isFinishedStatus } from '../entities/job-status.enum';
import { JobNotFoundError, JobQueueUnavailableError, JobWaitTimeoutError } from '../errors';
import { WAIT_ENDED_BY_SHUTDOWN } from '../job-queue.messages';
import { databaseErrorText } from '../errors/database-error.util';
import { JobEvent } from '../interfaces/job-event.interface';
import { LogPeriod } from '../periodic/log-period';
import { toJob } from '../sql/queryable';
import { readWaitedJobs } from '../sql/waited-jobs.query';
import { queueDatabase } from '../queue/queue-database';
import { JobEventStream } from './job-event-stream';

/** One `waitForJob` call. */
interface Waiter {
  resolve(job: Job): void;
  reject(error: unknown): void;
}

/**
 * `QueueService.waitForJob`: every wait of this process, by job id, sharing one subscription to
 * the event stream (and so one LISTEN connection) and one poll. A wait is settled by reading its
 * job (one statement for every job to read): at its start, when an event says the job finished,
 * when LISTEN (re)connects, and at each poll: every `events.waitPollIntervalMs` while this
 * process does not LISTEN, every `WAIT_POLL_WITH_LISTEN_MS` while it does. Once the last wait
 * settles, its timer, subscription and connection are gone. At shutdown, waits still pending
 * reject with `JobQueueUnavailableError`, so none holds a connection past the app.
 */
@Injectable()
export class JobWaits implements OnApplicationShutdown {
  private readonly logger = new Logger('JobQueue');
  private readonly waiters = new Map<string, Set<Waiter>>();
  private subscription: Promise<() => Promise<void>> | undefined;
  private readonly toRead = new Set<string>();
  private readScheduled = false;
  private reading = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly failureLog = new LogPeriod();

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly stream: JobEventStream,
  ) {}

  /** Waits in progress. */
  get size(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }

  /** No wait, and nothing of past waits left: no poll timer, no subscription, no read due. */
  get idle(): boolean {
    return (
      this.waiters.size === 0 &&
      this.pollTimer === undefined &&
      this.subscription === undefined &&
      !this.readScheduled
    );
  }

  onApplicationShutdown(): void {
    for (const id of [...this.waiters.keys()]) {
      this.settleAll(id, (waiter) =>
        waiter.reject(new JobQueueUnavailableError(WAIT_ENDED_BY_SHUTDOWN(id))),
      );
    }
  }

  /** Resolves with the job once it is finished; see `QueueService.waitForJob` (checked input). */
  wait(id: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Job> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Job>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.remove(id, waiter);
      };
      const waiter: Waiter = {
        resolve: (job) => {
          settle();
          resolve(job);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      const onAbort = (): void => waiter.reject(signal!.reason);
      const timer = setTimeout(
        () => waiter.reject(new JobWaitTimeoutError(id, timeoutMs)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(waiter);
      // Read the job once the LISTEN connection is up: a finish after the read is then heard.
      void this.subscribed().then(() => this.readSoon([id]));
    });
  }

  private subscribed(): Promise<unknown> {
    if (!this.subscription) {
      this.subscription = this.stream.subscribe({
        events: (events) => this.heard(events),
        connected: () => this.readSoon(this.waiters.keys()),
      });
      void this.subscription.then(() => this.schedulePoll());
    }
    return this.subscription;
  }

  private heard(events: readonly JobEvent[]): void {
    for (const event of events) {
      if (isFinishedStatus(event.status) && this.waiters.has(event.id)) this.readSoon([event.id]);
    }
  }

  private remove(id: string, waiter: Waiter): void {
    const set = this.waiters.get(id);
    if (!set?.delete(waiter)) return;
    if (set.size === 0) this.waiters.delete(id);
    if (this.waiters.size > 0) return;
    // The last wait settled: nothing of it may outlive it.
    this.toRead.clear();
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    void subscription?.then((unsubscribe) => unsubscribe());
  }

  private schedulePoll(delayMs?: number): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    if (this.waiters.size === 0) return;
    const period =
      delayMs ??
      (this.stream.remoteConnected
        ? Math.max(WAIT_POLL_WITH_LISTEN_MS, this.options.events.waitPollIntervalMs)
        : this.options.events.waitPollIntervalMs);
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      this.readSoon(this.waiters.keys());
    }, period);
  }

  /** Reads these jobs soon, with any others asked for meanwhile, in one statement. */
  private readSoon(ids: Iterable<string>): void {
    for (const id of ids) if (this.waiters.has(id)) this.toRead.add(id);
    if (this.toRead.size === 0 || this.readScheduled || this.reading) return;
    this.readScheduled = true;
    setImmediate(() => {
      this.readScheduled = false;
      void this.read();
    });
  }

  private async read(): Promise<void> {
    const ids = [...this.toRead].filter((id) => this.waiters.has(id));
    this.toRead.clear();
    if (ids.length === 0) return;
    this.reading = true;
    let failed = false;
    try {
      const db = queueDatabase(this.dataSource, this.options.databaseTimeoutMs);
      for (const { id, status, row } of await readWaitedJobs(db, this.options.schema, ids)) {
        if (status === null)
          this.settleAll(id, (waiter) => waiter.reject(new JobNotFoundError(id)));
        else if (row) {
          const job = toJob(row);
          this.settleAll(id, (waiter) => waiter.resolve(job));
        }
      }
      this.failureLog.reset();
    } catch (error) {
      failed = true;
      if (this.failureLog.due()) {
        this.logger.warn(
          `waitForJob could not read ${ids.length} waited job(s) (${databaseErrorText(error)}); ` +
            'reading again at the next poll',
        );
      }
    } finally {
      this.reading = false;
    }
    this.schedulePoll(failed ? this.options.events.waitPollIntervalMs : undefined);
    for (const id of this.toRead) if (!this.waiters.has(id)) this.toRead.delete(id);
    if (this.toRead.size > 0) this.readSoon([]);
  }

  private settleAll(id: string, settle: (waiter: Waiter) => void): void {
    for (const waiter of [...(this.waiters.get(id) ?? [])]) settle(waiter);
  }
}

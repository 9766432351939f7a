import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  DEFAULT_COMPLETION_BATCH_SIZE,
  DEFAULT_COMPLETION_FLUSH_MS,
  JOB_QUEUE_DATA_SOURCE,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobStatus } from '../entities/job-status.enum';
import {
  finishJobs,
  JobOutcome,
  NO_LOG_ROWS,
  SNOOZED,
  SupersededOutcome,
} from '../sql/finish-jobs.query';
import { FailureBackoff } from '../periodic/failure-backoff';
import { LogPeriod } from '../periodic/log-period';
import { ClaimWakeup } from '../periodic/claim-wakeup';
import { QueueClock } from '../periodic/queue-clock';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { RunningJobs, RunRef } from './running-jobs';
import {
  databaseErrorText,
  isTransientDatabaseError,
  statementRefusal,
} from '../errors/database-error.util';
import { describeRefusal } from '../errors/job-queue-database.error';
import { JobEventStream } from '../events/job-event-stream';
import { jobEvent, JobEventSubject } from '../events/job-event-payload';
import { JobEvent, JobEventName } from '../interfaces/job-event.interface';

/** An outcome as the executor queues it, with what its attempt becomes if it cannot be written. */
export interface QueuedOutcome extends JobOutcome {
  /**
   * The attempt as failed: `pending` after a retry delay while attempts remain, else `failed`.
   * Worked out only for an outcome the database refuses: most never are.
   */
  ifRefused: () => Pick<JobOutcome, 'status' | 'retryDelayMs'>;
  /**
   * Whether writing it may also update other jobs' rows: the triggers that hand its concurrency
   * key's slot to a waiting job or count it done for its dependants. Such an outcome is never
   * written beside another write (see `JobCompleter`).
   */
  updatesOtherJobs: boolean;
  /** The job as its outcome's event tells it, before the outcome (see `outcomeEvent`). */
  subject: JobEventSubject;
}

/** The event of an outcome that landed: the job's status and attempts as the write left them. */
export function outcomeEvent(outcome: JobOutcome, subject: JobEventSubject): JobEvent {
  const later = outcome.status === JobStatus.Pending || outcome.status === SNOOZED;
  const status = later
    ? (outcome.retryDelayMs ?? 0) > 0
      ? JobStatus.Scheduled
      : JobStatus.Pending
    : outcome.status;
  const attempts =
    outcome.status === SNOOZED ? Math.max(subject.attempts - 1, 0) : subject.attempts;
  const event: JobEventName =
    outcome.status === JobStatus.Pending
      ? 'retrying'
      : outcome.status === SNOOZED
        ? 'snoozed'
        : outcome.status === JobStatus.Completed
          ? 'completed'
          : 'failed';
  return jobEvent(event, { ...subject, status, attempts });
}

/**
 * Most result JSON (in UTF-16 units) one write carries beyond its first outcome: 500 results of
 * `maxResultBytes` each would otherwise make one statement of hundreds of MB.
 */
export const MAX_WRITE_RESULT_CHARS = 16 * 1024 * 1024;
/**
 * Writes under way at once, at most. With one, a busy worker's outcomes waited for the write
 * before theirs: writing 500 took the database about as long as running them took the worker
 * (bench/README.md, "Shaped by measurement").
 */
export const COMPLETION_WRITES_AT_ONCE = 2;
/** Refused outcomes one log line names by job id; the rest are counted. */
const MAX_IDS_PER_LINE = 10;

/** One write under way. */
interface OutcomeWrite {
  /** Its outcomes not written yet: their leases are still renewed. */
  unwritten: QueuedOutcome[];
  /** Whether one of them updates other jobs' rows: then no other write starts until it ends. */
  alone: boolean;
}

/** An outcome the database refused, for the log: why, and whether its fallback write landed. */
interface Refusal {
  id: string;
  reason: string;
  recorded: boolean;
}

/**
 * Writes attempt outcomes (completed, failed, retry) in batches: one statement per flush, a
 * flush every few ms or every `DEFAULT_COMPLETION_BATCH_SIZE` outcomes, and up to
 * `COMPLETION_WRITES_AT_ONCE` flushes under way. Writes beside each other carry only outcomes
 * that update their own job's row, so they do not lock the same rows; an outcome that may update
 * other jobs (`updatesOtherJobs`) is written alone, as is everything while the database is
 * failing. An outcome stays queued until its write succeeds, so a database hiccup delays it
 * instead of losing it (if the process dies first, the reaper re-runs the job: at-least-once).
 * An outcome whose run no longer holds its job (cancelled, retried or taken back since) changes
 * nothing and is counted as superseded.
 *
 * A write the database refuses for good (a constraint or trigger of the app's, a value a column
 * cannot hold) costs only the outcome it refuses: the batch is split in halves down to that one,
 * the rest lands, and the offender's attempt is recorded as failed, without its result. What the
 * database refused is never sent again as it was, so no outcome holds back the others.
 */
@Injectable()
export class JobCompleter {
  private readonly logger = new Logger('JobQueue');
  private queue: QueuedOutcome[] = [];
  /** The writes under way, each with the promise that settles when it has ended. */
  private readonly writes = new Map<OutcomeWrite, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** Set by drain(): after shutdown nothing is rescheduled, so no timer keeps the process alive. */
  private drained = false;
  private readonly backoff = new FailureBackoff();
  private readonly outageLog = new LogPeriod();

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly events: JobEventStream,
    private readonly registry: JobHandlerRegistry,
    private readonly wakeup: ClaimWakeup,
    private readonly clock: QueueClock,
  ) {}

  /** Runs whose outcome is not written yet: their lease must still be renewed. */
  pendingRuns(): RunRef[] {
    const unwritten = [...this.writes.keys()].flatMap((write) => write.unwritten);
    return [...unwritten, ...this.queue].map((outcome) => ({
      id: outcome.id,
      token: outcome.runToken,
    }));
  }

  push(outcome: QueuedOutcome): void {
    this.queue.push(outcome);
    if (this.queue.length >= DEFAULT_COMPLETION_BATCH_SIZE) this.schedule(0);
    else this.schedule(DEFAULT_COMPLETION_FLUSH_MS);
  }

  /** Back to writing in the background after a drain: the worker was started again. */
  resume(): void {
    this.drained = false;
  }

  /** Writes everything queued; on shutdown, keeps trying until `deadline` (epoch ms). */
  async drain(deadline: number): Promise<void> {
    this.drained = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    while ((this.queue.length > 0 || this.writes.size > 0) && Date.now() < deadline) {
      await (this.writes.size > 0 ? Promise.all(this.writes.values()) : this.flush());
      if (this.queue.length > 0 && this.backoff.failing) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(200, deadline - Date.now())));
      }
    }
    if (this.queue.length > 0) {
      this.logger.error(
        `${this.queue.length} job outcome(s) could not be written before shutdown; ` +
          `those jobs will be re-run once their lease expires.`,
      );
    }
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.drained || !this.mayStartWrite()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }

  /**
   * Whether a write of the head of the queue may start now: when none is under way, or beside
   * fewer than `COMPLETION_WRITES_AT_ONCE` while the database answers and neither side updates
   * other jobs' rows.
   */
  private mayStartWrite(): boolean {
    if (this.writes.size === 0) return true;
    return (
      this.writes.size < COMPLETION_WRITES_AT_ONCE &&
      !this.backoff.failing &&
      !this.queue[0]?.updatesOtherJobs &&
      ![...this.writes.keys()].some((write) => write.alone)
    );
  }

  /** Starts a write of the head of the queue, if one may start; resolves when it has ended. */
  private flush(): Promise<void> {
    if (this.queue.length === 0 || !this.mayStartWrite()) return Promise.resolve();
    const beside = this.writes.size > 0;
    const unwritten = this.queue.splice(0, this.nextBatchSize(beside));
    const write: OutcomeWrite = {
      unwritten,
      alone: unwritten.some((outcome) => outcome.updatesOtherJobs),
    };
    const ended = this.write(write).finally(() => {
      this.writes.delete(write);
      if (this.queue.length > 0) this.schedule(this.backoff.failing ? this.backoff.delayMs : 0);
    });
    this.writes.set(write, ended);
    // A full batch left behind starts beside this write at once, if it may.
    if (this.queue.length >= DEFAULT_COMPLETION_BATCH_SIZE) void this.flush();
    return ended;
  }

  /**
   * How many outcomes at the head of the queue make the next write: a count and a size cap;
   * `beside` another write, only those before the first that updates other jobs' rows.
   */
  private nextBatchSize(beside: boolean): number {
    const limit = Math.min(this.queue.length, DEFAULT_COMPLETION_BATCH_SIZE);
    let chars = this.queue[0].resultJson?.length ?? 0;
    let count = 1;
    while (count < limit) {
      const next = this.queue[count];
      chars += next.resultJson?.length ?? 0;
      if (chars > MAX_WRITE_RESULT_CHARS || (beside && next.updatesOtherJobs)) break;
      count++;
    }
    return count;
  }

  private async write(write: OutcomeWrite): Promise<void> {
    // The whole batch, kept before `land` empties `unwritten` as its parts land.
    const batch = write.unwritten;
    const refusals: Refusal[] = [];
    try {
      await this.land(write, refusals);
      this.backoff.succeeded();
      this.outageLog.reset();
      // A type limited across nodes has its slots in the database: they are free only now that
      // the outcomes landed, and a claim the freed slots sent earlier may have found them held.
      if (batch.some((outcome) => this.registry.limitedAcrossNodes(outcome.subject.jobType))) {
        this.wakeup.jobsClaimable();
      }
    } catch (error) {
      // Only a lost connection or a passing refusal gets here: what is unwritten stays queued.
      this.queue.unshift(...write.unwritten);
      write.unwritten = [];
      this.backoff.failed();
      if (this.outageLog.due()) {
        this.logger.error(
          `Could not record ${this.queue.length} job outcome(s) ` +
            `(${this.backoff.failures} failure(s) in a row, retrying every ` +
            `${this.backoff.delayMs} ms): ${databaseErrorText(error)}`,
        );
      }
    } finally {
      if (refusals.length > 0) this.logRefusals(refusals);
    }
  }

  /**
   * Writes `write`'s outcomes, keeping its `unwritten` to what is not written yet. A part the
   * database refuses for good is split in halves, and a single refused outcome goes to
   * `recordRefused`. A transient failure (`isTransientDatabaseError`) is thrown, the rest left in
   * `unwritten`.
   */
  private async land(write: OutcomeWrite, refusals: Refusal[]): Promise<void> {
    const parts = [write.unwritten];
    while (parts.length > 0) {
      const part = parts[0];
      try {
        const superseded = await this.finish(part);
        this.recordSuperseded(superseded);
        this.emitLanded(part, superseded);
      } catch (error) {
        if (isTransientDatabaseError(error)) throw error;
        if (part.length > 1) {
          const half = Math.ceil(part.length / 2);
          parts.splice(0, 1, part.slice(0, half), part.slice(half));
          continue;
        }
        refusals.push(await this.recordRefused(part[0], error));
      }
      parts.shift();
      write.unwritten = parts.flat();
    }
  }

  /**
   * The second write for an outcome the database refused: the attempt as failed (retried per the
   * job's policy, or failed for good) with a `last_error` saying why, and no result. If the
   * database refuses that too, the outcome is dropped: its lease is no longer renewed, and the
   * reaper takes the job back after `staleAfterMs`. A transient failure is thrown: the outcome
   * then stays queued as it was.
   */
  private async recordRefused(outcome: QueuedOutcome, error: unknown): Promise<Refusal> {
    const refusal = statementRefusal(error);
    const reason = refusal
      ? describeRefusal(refusal.code, refusal.names)
      : databaseErrorText(error);
    const failed: JobOutcome = {
      id: outcome.id,
      runToken: outcome.runToken,
      ...outcome.ifRefused(),
      resultJson: null,
      lastError:
        outcome.status === JobStatus.Completed
          ? `The database refused to record this attempt as completed: ${reason}. ` +
            'Its result was not stored.'
          : outcome.status === SNOOZED
            ? `The database refused to record this attempt's snooze: ${reason}.`
            : `The database refused to record this attempt's failure: ${reason}. ` +
              "The handler's error was not stored.",
      progress: null,
      stage: null,
      // The run's rows are left out: they may be what the database refused.
      logRows: NO_LOG_ROWS,
      logOutcome: true,
    };
    try {
      const superseded = await this.finish([failed]);
      this.recordSuperseded(superseded);
      if (superseded.length === 0 && this.events.active) {
        this.events.emit([outcomeEvent(failed, outcome.subject)]);
      }
      return { id: outcome.id, reason, recorded: true };
    } catch (second) {
      if (isTransientDatabaseError(second)) throw second;
      return { id: outcome.id, reason, recorded: false };
    }
  }

  /** One outcome write; resolves with the outcomes that changed nothing. */
  private finish(outcomes: readonly JobOutcome[]): Promise<SupersededOutcome[]> {
    return finishJobs(
      this.dataSource,
      this.options.schema,
      this.options.workerId,
      outcomes,
      this.options.events.remote,
      this.clock.now(),
    );
  }

  /** The events of the outcomes of `part` that landed: a superseded one has none. */
  private emitLanded(part: readonly QueuedOutcome[], superseded: SupersededOutcome[]): void {
    if (!this.events.active) return;
    const changedNothing = new Set(superseded.map((o) => `${o.id}:${o.run_token}`));
    this.events.emit(
      part
        .filter((o) => !changedNothing.has(`${o.id}:${o.runToken}`))
        .map((o) => outcomeEvent(o, o.subject)),
    );
  }

  private recordSuperseded(superseded: SupersededOutcome[]): void {
    for (const outcome of superseded) {
      this.running.superseded.record('outcome', outcome.id, outcome.run_token);
    }
  }

  /** One line per flush, naming job ids and SQLSTATEs: never a result, an error or a parameter. */
  private logRefusals(refusals: Refusal[]): void {
    const named = refusals
      .slice(0, MAX_IDS_PER_LINE)
      .map(({ id, reason, recorded }) =>
        recorded
          ? `job ${id} (${reason})`
          : `job ${id} (${reason}; refused twice, left to the reaper)`,
      );
    const more = refusals.length - named.length;
    this.logger.error(
      `The database refused the outcome of ${refusals.length} job(s), recorded as failed ` +
        `attempts without their results (the rest of the batch was written): ` +
        named.join(', ') +
        (more > 0 ? `, and ${more} more` : ''),
    );
  }
}

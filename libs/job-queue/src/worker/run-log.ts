import { Job } from '../entities/job.entity';
import { JobLogRow } from '../sql/job-log-rows';

/**
 * The rows of a job's log (`job_events`) one run has yet to write: its `ctx.log` lines and the
 * progress values the throttle writes, with the run's `claimed` row in front of its first write.
 * They go out with the run's next progress write or its outcome, never in a statement of their
 * own.
 *
 * Bounded per job: lines and progress rows are kept while the job holds fewer than `maxRows`
 * rows (counted from `job.eventsCount` at the claim, plus what this run wrote); past that they
 * are dropped and counted, and the run's last write adds one `dropped` row that says how many.
 * The queue's own lifecycle rows (claimed, the outcome) are never dropped. `maxRows` 0: no lines
 * or progress rows are kept, and nothing says so.
 */
export class RunLog {
  private pending: JobLogRow[] = [];
  private claimedWritten = false;
  /** Rows of the job in the table, as far as this run knows. */
  private stored: number;
  private dropped = 0;

  constructor(
    private readonly job: Job,
    private readonly maxRows: number,
  ) {
    this.stored = job.eventsCount;
  }

  /** Adds a `ctx.log` line (its data already checked); false when the bound dropped it. */
  line(message: string, dataJson: string | null): boolean {
    return this.keep({ ...this.row('log'), at: new Date(), message, dataJson });
  }

  /** Adds the row of a progress value a write is about to carry. */
  progress(progress: number, stage: string | undefined): void {
    const dataJson = JSON.stringify({ progress, stage: stage ?? null });
    this.keep({ ...this.row('progress'), dataJson });
  }

  /** Whether lines or progress rows wait for a write. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** Whether this run has rows of its own: written, waiting, or dropped by the bound. */
  get used(): boolean {
    return this.claimedWritten || this.pending.length > 0 || this.dropped > 0;
  }

  /**
   * The rows for the run's next progress write, its `claimed` row first if it has written none.
   * Give them back with `putBack` if that write fails.
   */
  take(): JobLogRow[] {
    const rows = this.claimedWritten ? this.pending : [claimedRowOf(this.job), ...this.pending];
    this.pending = [];
    this.claimedWritten = true;
    this.stored += rows.length;
    return rows;
  }

  /**
   * The rows of a write that failed: its lines go with the next write, in front, and so does
   * its `claimed` row. Its progress row is not kept: the value is, and makes a row of its own
   * when it is written.
   */
  putBack(rows: JobLogRow[]): void {
    const lines = rows.filter((row) => row.kind !== 'claimed' && row.kind !== 'progress');
    if (rows.some((row) => row.kind === 'claimed')) this.claimedWritten = false;
    this.pending = [...lines, ...this.pending];
    this.stored -= rows.length;
  }

  /**
   * The rows for the run's outcome write, to go before its outcome row: what waits, the
   * `dropped` row if the bound dropped anything, and the `claimed` row first if none was written.
   */
  takeForOutcome(): JobLogRow[] {
    if (this.dropped > 0) {
      this.pending.push({
        ...this.row('dropped'),
        message: `${this.dropped} log row(s) dropped: the job reached events.maxLogRowsPerJob (${this.maxRows})`,
        dataJson: JSON.stringify({ dropped: this.dropped }),
      });
      this.dropped = 0;
    }
    return this.take();
  }

  /** The outcome rows of a run that made no log of its own: its `claimed` row. */
  static claimedOnly(job: Job): JobLogRow[] {
    return [claimedRowOf(job)];
  }

  private keep(row: JobLogRow): boolean {
    const claimed = this.claimedWritten ? 0 : 1;
    if (this.stored + claimed + this.pending.length >= this.maxRows) {
      if (this.maxRows > 0) this.dropped += 1;
      return false;
    }
    this.pending.push(row);
    return true;
  }

  private row(kind: JobLogRow['kind']): JobLogRow {
    return {
      jobId: this.job.id,
      attempt: this.job.attempts,
      at: null,
      kind,
      message: null,
      dataJson: null,
    };
  }
}

/** A run's `claimed` row, at the claim's time on the database's clock. */
function claimedRowOf(job: Job): JobLogRow {
  return {
    jobId: job.id,
    attempt: job.attempts,
    at: job.claimedAt ?? null,
    kind: 'claimed',
    message: null,
    dataJson: job.workerId === null ? null : JSON.stringify({ workerId: job.workerId }),
  };
}

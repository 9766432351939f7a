import { Logger } from '@nestjs/common';

/** The writes a run makes for its job. */
export type RunWriteKind = 'progress' | 'heartbeat' | 'outcome';

/**
 * Counts the writes of superseded runs: runs whose job was cancelled, retried or taken back by
 * the reaper since they were claimed, so that their fencing token or the job's status no longer
 * matches and the write changed nothing. Each one is also a debug line. Not an error: at-least-once
 * delivery lets an old run go on for a moment; it only may not speak for the job.
 */
export class SupersededWrites {
  private readonly logger = new Logger('JobQueue');
  private readonly counts: Record<RunWriteKind, number> = { progress: 0, heartbeat: 0, outcome: 0 };

  /** How many writes of each kind changed nothing so far. */
  get byKind(): Readonly<Record<RunWriteKind, number>> {
    return this.counts;
  }

  get total(): number {
    return this.counts.progress + this.counts.heartbeat + this.counts.outcome;
  }

  record(kind: RunWriteKind, jobId: string, runToken: number): void {
    this.counts[kind]++;
    this.logger.debug(
      `Job ${jobId}: the ${kind} write of run ${runToken} changed nothing; ` +
        `the job was cancelled, retried or taken back since that run was claimed`,
    );
  }
}

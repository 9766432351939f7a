import { performance } from 'node:perf_hooks';
import { ClaimAfter, ClaimPosition } from '../sql/claim-job-batch.query';

/**
 * How often a claim goes out without cursors at most: it finds the jobs that became pending
 * behind them (committed late by an old transaction, retried, handed back, rescued). It reads
 * what every claim read before cursors, the dead entries at the head of each type's queue, so
 * it is kept rare; a job behind a cursor waits at most this long (and one poll) for it.
 */
export const HEAD_RESCAN_MS = 1_000;

/**
 * Most priorities a type keeps cursors for. A type's claim reads one segment per cursor and one
 * per range between them; past this many, the priorities claimed longest ago are forgotten (their
 * range is read from its head again, which is slower while dead entries wait there, never wrong).
 */
export const MAX_CURSORS_PER_TYPE = 8;

const NO_CURSORS: ClaimAfter = { jobTypes: [], priorities: [], createdAt: [], ids: [] };

/**
 * This worker's cursors into the queue, one per job type and priority: where its last claim of
 * that type and priority ended. A claim resumes after them (see `claimJobBatchQueryV3`): the
 * entries before a cursor belong to jobs claimed already, dead once they were, and walking them
 * is what made every claim slower while VACUUM could not remove them.
 *
 * A claim from the heads (no cursors) goes out at the first claim, then at most every
 * `HEAD_RESCAN_MS`, and at the next claim after `rescanSoon()` (jobs were made pending behind
 * the cursors, as the stager's notification says).
 */
export class ClaimCursors {
  private readonly byType = new Map<string, Map<number, ClaimPosition>>();
  private lastHeadClaimAt = -Infinity;
  private headClaimAsked = true;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The next claim reads every type from its head. */
  rescanSoon(): void {
    this.headClaimAsked = true;
  }

  /**
   * The cursors for the claim about to go out: none when a claim from the heads is due (which
   * then counts as made).
   */
  forClaim(): ClaimAfter {
    const now = this.now();
    if (this.headClaimAsked || now - this.lastHeadClaimAt >= HEAD_RESCAN_MS) {
      this.headClaimAsked = false;
      this.lastHeadClaimAt = now;
      return NO_CURSORS;
    }
    const after: ClaimAfter = { jobTypes: [], priorities: [], createdAt: [], ids: [] };
    for (const positions of this.byType.values()) {
      for (const position of positions.values()) {
        after.jobTypes.push(position.jobType);
        after.priorities.push(position.priority);
        after.createdAt.push(position.createdAt);
        after.ids.push(position.id);
      }
    }
    return after;
  }

  /**
   * Moves each (type, priority) a claim took jobs from to its last job there: `ends` are the
   * claim's jobs in the claim's order, so the last of each is where it ended. After a claim from
   * the heads that may be before the old cursor (it took jobs that were behind): the entries
   * between are read once more by the next claim, and the cursor is exact again.
   */
  advance(ends: readonly ClaimPosition[]): void {
    for (const end of ends) {
      let positions = this.byType.get(end.jobType);
      if (!positions) {
        positions = new Map();
        this.byType.set(end.jobType, positions);
      }
      // Re-inserted so the map's order is the order priorities were last claimed in.
      positions.delete(end.priority);
      positions.set(end.priority, end);
    }
    for (const positions of this.byType.values()) {
      for (const priority of positions.keys()) {
        if (positions.size <= MAX_CURSORS_PER_TYPE) break;
        positions.delete(priority);
      }
    }
  }

  /** How many cursors are held (for tests and logs). */
  get size(): number {
    let size = 0;
    for (const positions of this.byType.values()) size += positions.size;
    return size;
  }
}

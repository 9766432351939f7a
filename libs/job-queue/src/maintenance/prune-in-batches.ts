import { Queryable } from '../sql/queryable';
import { PRUNE_BATCH_SIZE, PruneCriteria, PruneCursor, pruneJobs } from '../sql/prune-jobs.query';

export interface PruneBatchesOptions {
  /** The advisory lock each statement must get (null: none, an operator's `prune()`). */
  lockKey: string | null;
  /** No statement starts after this (Date.now() ms); null: until done. */
  deadline: number | null;
  /** Checked before each statement: true ends the pass (the worker is stopping). */
  stopping?: () => boolean;
  /** The queue's time retention counts back from (null: the database's now()). */
  now?: Date | null;
}

/** What a prune did: the jobs it deleted, and the old enough ones it kept. */
export interface PruneTotals {
  deleted: number;
  /** Kept because an unfinished job depends on them (they go once it has finished). */
  keptForDependants: number;
}

/**
 * Deletes what `criteria` selects, one bounded page after another (each its own transaction,
 * so no lock or snapshot is held between them), each page resuming where the last one ended,
 * past the rows it kept, until a page reads fewer rows than a batch, the lock is held elsewhere,
 * the deadline passes or `stopping()` says so.
 */
export async function pruneInBatches(
  db: Queryable,
  schema: string,
  criteria: PruneCriteria,
  { lockKey, deadline, stopping, now = null }: PruneBatchesOptions,
): Promise<PruneTotals> {
  const totals: PruneTotals = { deleted: 0, keptForDependants: 0 };
  let after: PruneCursor | null = null;
  for (;;) {
    if (stopping?.()) break;
    const page = await pruneJobs(db, schema, lockKey, criteria, PRUNE_BATCH_SIZE, now, after);
    totals.deleted += page.deleted;
    totals.keptForDependants += page.kept;
    if (!page.held || page.read < PRUNE_BATCH_SIZE || page.cursor === null) break;
    after = page.cursor;
    if (deadline !== null && Date.now() >= deadline) break;
  }
  return totals;
}

import { Queryable } from '../sql/queryable';
import { PRUNE_BATCH_SIZE, PruneCriteria, pruneJobs } from '../sql/prune-jobs.query';

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

/**
 * Deletes what `criteria` selects, one bounded statement after another (each its own
 * transaction, so no lock or snapshot is held between them), until a statement deletes fewer
 * than a batch, the lock is held elsewhere, the deadline passes or `stopping()` says so. Returns
 * how many jobs it deleted.
 */
export async function pruneInBatches(
  db: Queryable,
  schema: string,
  criteria: PruneCriteria,
  { lockKey, deadline, stopping, now = null }: PruneBatchesOptions,
): Promise<number> {
  let total = 0;
  for (;;) {
    if (stopping?.()) break;
    const { held, deleted } = await pruneJobs(db, schema, lockKey, criteria, PRUNE_BATCH_SIZE, now);
    total += deleted;
    if (!held || deleted < PRUNE_BATCH_SIZE) break;
    if (deadline !== null && Date.now() >= deadline) break;
  }
  return total;
}

import { Queryable } from '../sql/queryable';
import { REDRIVE_BATCH_SIZE, RedriveCriteria, redriveJobs } from '../sql/redrive-jobs.query';

/**
 * Moves the failed jobs `criteria` selects back to `pending`, one bounded statement after another
 * in id order (each its own transaction, so no lock is held between them), until a statement
 * sees fewer than a batch. Returns how many jobs it moved.
 */
export async function redriveInBatches(
  db: Queryable,
  schema: string,
  criteria: RedriveCriteria,
  batchSize: number = REDRIVE_BATCH_SIZE,
): Promise<number> {
  let total = 0;
  let afterId = '0';
  for (;;) {
    const batch = await redriveJobs(db, schema, afterId, criteria, batchSize);
    total += batch.moved;
    if (batch.lastId === null || batch.seen < batchSize) return total;
    afterId = batch.lastId;
  }
}

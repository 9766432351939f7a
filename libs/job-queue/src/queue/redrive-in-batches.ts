import { Queryable } from '../sql/queryable';
import {
  REDRIVE_BATCH_SIZE,
  RedriveBatch,
  RedriveCriteria,
  redriveJobs,
} from '../sql/redrive-jobs.query';
import { isUniqueKeyTaken } from '../sql/unique-keys.sql';

/** How many times one batch is sent again after another job took one of its keys meanwhile. */
const KEY_TAKEN_RETRIES = 5;

/** What a redrive did: the jobs it moved back to `pending`, and those it left failed, and why. */
export interface RedriveTotals {
  moved: number;
  /** Another job holds its unique key (or an earlier failed job of the same key was moved). */
  skippedForKey: number;
  /** Another transaction held it (a concurrent redrive or retry, which then decides it). */
  skippedLocked: number;
}

/**
 * Moves the failed jobs `criteria` selects back to `pending`, one bounded statement after another
 * in id order (each its own transaction, so no lock is held between them), each after the last
 * job the previous one's scan read, until a scan reads fewer than a batch: what another redrive
 * holds, or what a key keeps failed, never ends it early.
 */
export async function redriveInBatches(
  db: Queryable,
  schema: string,
  criteria: RedriveCriteria,
  batchSize: number = REDRIVE_BATCH_SIZE,
): Promise<RedriveTotals> {
  const totals: RedriveTotals = { moved: 0, skippedForKey: 0, skippedLocked: 0 };
  let afterId = '0';
  for (;;) {
    const batch = await redriveBatch(db, schema, afterId, criteria, batchSize);
    totals.moved += batch.moved;
    totals.skippedForKey += batch.locked - batch.moved;
    totals.skippedLocked += batch.seen - batch.locked;
    if (batch.lastId === null || batch.seen < batchSize) return totals;
    afterId = batch.lastId;
  }
}

/**
 * One batch. An enqueue of a key one of its jobs has, still uncommitted when the batch looked for
 * holders, makes the batch's UPDATE fail with a unique violation once it commits, undoing the
 * whole batch: it is sent again, and then sees that holder and leaves that one job failed.
 */
async function redriveBatch(
  db: Queryable,
  schema: string,
  afterId: string,
  criteria: RedriveCriteria,
  batchSize: number,
): Promise<RedriveBatch> {
  for (let retries = 0; ; retries++) {
    try {
      return await redriveJobs(db, schema, afterId, criteria, batchSize);
    } catch (error) {
      if (!isUniqueKeyTaken(error) || retries === KEY_TAKEN_RETRIES) throw error;
    }
  }
}

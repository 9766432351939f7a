import { Job } from '../entities/job.entity';
import { findUnfinishedByUniqueKeys } from '../sql/find-unfinished-by-unique-keys.query';
import { insertJobs, JobInsertRow } from '../sql/insert-jobs.query';
import { Queryable, toJob } from '../sql/queryable';

// A unique key freed between a duplicate's insert and our look-up (its holder finished) makes us
// insert again; more than a few rounds means something else is wrong.
const MAX_UNIQUE_KEY_ROUNDS = 5;

/**
 * Inserts the rows, in their order; a row whose unique key an unfinished job already holds
 * resolves to that job instead. Only when a key clashes does this take more than the one insert
 * statement.
 */
export async function insertHoldingUniqueKeys(
  db: Queryable,
  schema: string,
  rows: readonly JobInsertRow[],
): Promise<Job[]> {
  const jobs: Job[] = new Array(rows.length);
  let pending = rows.map((_, index) => index);
  for (let round = 0; pending.length > 0; round++) {
    if (round === MAX_UNIQUE_KEY_ROUNDS) {
      throw new Error(`Could not enqueue after ${round} rounds of unique key conflicts`);
    }
    const inserted = await insertJobs(
      db,
      schema,
      pending.map((index) => rows[index]),
    );
    inserted.forEach((job, position) => {
      if (job) jobs[pending[position]] = job;
    });
    pending = pending.filter((index) => jobs[index] === undefined);
    if (pending.length === 0) break;
    const keys = [...new Set(pending.map((index) => rows[index].uniqueKey as string))];
    const holders = new Map(
      (await findUnfinishedByUniqueKeys(db, schema, keys)).map((row) => [
        row.unique_key,
        toJob(row),
      ]),
    );
    for (const index of pending) {
      const holder = holders.get(rows[index].uniqueKey);
      if (holder) jobs[index] = holder;
    }
    pending = pending.filter((index) => jobs[index] === undefined);
  }
  return jobs;
}

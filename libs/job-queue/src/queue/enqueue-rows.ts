import { JobStatus } from '../entities/job-status.enum';
import { EnqueueOutcome, EnqueueResult } from '../interfaces/enqueue-options.interface';
import { findUniqueKeyHolders } from '../sql/find-unique-key-holders.query';
import { insertJobs, JobInsertRow } from '../sql/insert-jobs.query';
import { JobRow, Queryable, toJob } from '../sql/queryable';
import { insertSuccessorJobs, SuccessorRow } from '../sql/insert-successor-jobs.query';
import { DebouncedRow, replaceDebouncedJobs } from '../sql/replace-debounced-jobs.query';
import { callerUniqueKey, countsOnlyUnfinished, isStoredUniqueKey } from '../sql/unique-keys.sql';

// Each round ends with a key taken by someone else: held by a job that finished (or whose
// window ended) before we looked it up, or, for a debounce, created by another caller after our
// replace found nothing (a holder or a successor). More than a few rounds means something else is wrong.
const MAX_UNIQUE_KEY_ROUNDS = 8;

/** The statuses of a holder that has not started: a debounce replaces its data. */
const NOT_STARTED: readonly string[] = [JobStatus.Scheduled, JobStatus.Pending, JobStatus.Waiting];

/** The statuses of a holder that has started: a debounce adds a successor to run after it. */
const STARTED: readonly string[] = [JobStatus.Claimed, JobStatus.Running];

/**
 * Enqueues the rows, in their order, and says what became of each: `created` (a new job, or a
 * debounce's successor to a holder that has started), `replaced` (a debounce gave its data to
 * the key's successor or its holder not started) or `skipped` (the key's holder is returned). The
 * unique index decides every clash; each statement here only acts on what it found (a replace
 * of holders not started, an insert that does nothing on a clash, a look-up of holders), and a
 * row none of them settled goes round again. Rows without keys take the one insert statement.
 * Every statement runs at the queue's time `now` (null: the database's now()).
 */
export async function enqueueRows(
  db: Queryable,
  schema: string,
  input: readonly JobInsertRow[],
  now: Date | null = null,
): Promise<EnqueueResult[]> {
  const results: Array<EnqueueResult | undefined> = new Array(input.length);
  const { rows, sent, repeats } = collapseDebounces(input);
  let pending = sent;
  const settle = (index: number, job: EnqueueResult['job'], outcome: EnqueueOutcome): void => {
    results[index] = { job, outcome };
  };
  const unsettled = (): number[] => pending.filter((index) => results[index] === undefined);
  for (let round = 0; pending.length > 0; round++) {
    if (round === MAX_UNIQUE_KEY_ROUNDS) {
      throw new Error(`Could not enqueue after ${round} rounds of unique key conflicts`);
    }
    // Holders are updated in key order, whatever the caller's: two batches that name the same
    // keys wait for each other in turn instead of in a cycle (a deadlock). The insert takes its
    // keys in that order too (see insertJobs).
    const debounced = inKeyOrder(
      pending.filter((index) => rows[index].debounceMs !== null),
      rows,
    );
    if (debounced.length > 0) {
      const replaced = await replaceDebouncedJobs(
        db,
        schema,
        debounced.map((index) => rows[index] as DebouncedRow),
        now,
      );
      for (const [position, row] of replaced) settle(debounced[position], toJob(row), 'replaced');
      pending = unsettled();
      if (pending.length === 0) break;
    }
    const inserted = await insertJobs(
      db,
      schema,
      pending.map((index) => rows[index]),
      now,
    );
    inserted.forEach((job, position) => {
      if (job) settle(pending[position], job, 'created');
    });
    pending = unsettled();
    if (pending.length === 0) break;
    const holders = holdersByKey(
      await findUniqueKeyHolders(
        db,
        schema,
        pending.map((index) => rows[index] as { uniqueKey: string; uniqueWindowMs: number | null }),
        now,
      ),
    );
    const successors: number[] = [];
    const successorRows: SuccessorRow[] = [];
    for (const index of pending) {
      const row = rows[index];
      const holder = holders
        .get(row.uniqueKey as string)
        ?.find((job) =>
          isStoredUniqueKey(job.unique_key as string, row.uniqueKey as string, row.uniqueWindowMs),
        );
      // No holder: the key was freed since; a debounce's holder not started: replace it.
      if (!holder || (row.debounceMs !== null && replaceable(holder, row))) continue;
      if (row.debounceMs !== null && takesSuccessor(holder, row)) {
        successors.push(index);
        successorRows.push({
          row,
          holderId: String(holder.id),
          holderKey: holder.unique_key as string,
        });
        continue;
      }
      settle(index, toJob(holder), 'skipped');
    }
    if (successors.length > 0) {
      const added = await insertSuccessorJobs(db, schema, successorRows, now);
      for (const [position, row] of added) settle(successors[position], toJob(row), 'created');
    }
    pending = unsettled();
  }
  for (const [first, later] of repeats) {
    const { job, outcome } = results[first] as EnqueueResult;
    // One after another, the first call did what the batch did; each later one replaced it.
    for (const index of later) settle(index, job, outcome === 'skipped' ? 'skipped' : 'replaced');
  }
  return results as EnqueueResult[];
}

/**
 * `indices` sorted by their rows' unique keys and windows (a stable sort). The order only has to
 * be the same in every process: the holder rows the replace locks are taken in its input's order.
 */
function inKeyOrder(indices: readonly number[], rows: readonly JobInsertRow[]): number[] {
  const key = (index: number): [string, number] => [
    rows[index].uniqueKey ?? '',
    rows[index].uniqueWindowMs ?? -1,
  ];
  return [...indices].sort((a, b) => {
    const [keyA, windowA] = key(a);
    const [keyB, windowB] = key(b);
    if (keyA !== keyB) return keyA < keyB ? -1 : 1;
    return windowA - windowB;
  });
}

function replaceable(holder: JobRow, row: JobInsertRow): boolean {
  return NOT_STARTED.includes(holder.status as string) && holder.job_type === row.jobType;
}

/**
 * A debounce whose holder has started gets a successor that runs after it, when the holder is of
 * its type and neither key counts in a finished status: the successor takes the key in the
 * statement that finishes the holder, which a holder still holding it once finished (its
 * `uniqueStates` name `completed`, say) would refuse. Such a call is `skipped`, as any call of
 * that key would be once the holder finished.
 */
function takesSuccessor(holder: JobRow, row: JobInsertRow): boolean {
  return (
    STARTED.includes(holder.status as string) &&
    holder.job_type === row.jobType &&
    countsOnlyUnfinished(row.uniqueStates) &&
    countsOnlyUnfinished(holder.unique_states as number | null)
  );
}

/** The holders by their caller's key (a key's holders differ in their windows). */
function holdersByKey(holders: readonly JobRow[]): Map<string, JobRow[]> {
  const byKey = new Map<string, JobRow[]>();
  for (const holder of holders) {
    const key = callerUniqueKey(holder.unique_key as string);
    byKey.set(key, [...(byKey.get(key) ?? []), holder]);
  }
  return byKey;
}

/**
 * A batch's debounced jobs of one type and key make one row, with the last one's data (what a
 * run of debounced calls leaves), sent at the first one's position: `rows` are the rows with
 * that data, `sent` the positions to enqueue, `repeats` the later positions of each such key,
 * which take the first one's job.
 */
function collapseDebounces(rows: readonly JobInsertRow[]): {
  rows: readonly JobInsertRow[];
  sent: number[];
  repeats: Map<number, number[]>;
} {
  const all = rows.map((_, index) => index);
  if (!rows.some((row) => row.debounceMs !== null)) return { rows, sent: all, repeats: new Map() };
  const firstOf = new Map<string, number>();
  const repeats = new Map<number, number[]>();
  const sent: number[] = [];
  const collapsed = [...rows];
  for (const index of all) {
    const row = rows[index];
    if (row.debounceMs === null) {
      sent.push(index);
      continue;
    }
    const group = JSON.stringify([row.jobType, row.uniqueKey]);
    const first = firstOf.get(group);
    if (first === undefined) {
      firstOf.set(group, index);
      sent.push(index);
    } else {
      repeats.set(first, [...(repeats.get(first) ?? []), index]);
      collapsed[first] = { ...collapsed[first], dataJson: row.dataJson };
    }
  }
  return { rows: collapsed, sent, repeats };
}

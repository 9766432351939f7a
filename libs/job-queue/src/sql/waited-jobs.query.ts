import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/**
 * For each id: whether a job has it (`waited_status`, null when none), and the whole row only
 * when the job is finished (an unfinished job's `data` is not read for nothing).
 */
const WAITED_JOBS = (schema: QueueSchema): string => `
  SELECT w.id::text AS waited_id, s.status AS waited_status, f.*
  FROM pg_catalog.unnest($1::bigint[]) AS w(id)
    LEFT JOIN ${schema.jobs} AS s ON s.id = w.id
    LEFT JOIN ${schema.jobs} AS f
      ON f.id = s.id AND s.status IN ('completed', 'failed', 'cancelled')`;

/** Where a waited job is: gone (no such job), unfinished, or finished with its row. */
export interface WaitedJob {
  id: string;
  /** `null`: no job has this id (never had, or pruned). */
  status: string | null;
  /** The job's row when it is finished. */
  row: JobRow | undefined;
}

/** One statement for any number of waited jobs (`QueueService.waitForJob`). */
export async function readWaitedJobs(
  db: Queryable,
  schema: string,
  ids: readonly string[],
): Promise<WaitedJob[]> {
  const rows = await queryRows(db, queueSchema(schema).statement(WAITED_JOBS), [ids]);
  return rows.map((row) => ({
    id: row.waited_id as string,
    status: (row.waited_status as string | null) ?? null,
    row: row.id === null || row.id === undefined ? undefined : row,
  }));
}

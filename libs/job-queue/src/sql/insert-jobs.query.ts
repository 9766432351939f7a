import { Queryable, queryRows, JobRow } from './queryable';

/** One job to insert, already validated; `data` is its JSON text. */
export interface JobInsertRow {
  jobType: string;
  dataJson: string;
  priority: number;
  runAt: Date | null;
  delayMs: number;
  maxAttempts: number | null;
  uniqueKey: string | null;
}

/**
 * Inserts every row in one statement (arrays through `unnest`, whatever the count) and returns
 * `[inputIndex, row]` for the rows inserted. A row whose `uniqueKey` is held by an unfinished job
 * is skipped, not an error (ON CONFLICT DO NOTHING): the caller looks the holder up.
 *
 * Ids are drawn in the input's order before the insert so each returned row can be matched back
 * to its input position (`ord`), which INSERT … RETURNING alone cannot say.
 */
export async function insertJobs(
  db: Queryable,
  rows: readonly JobInsertRow[],
): Promise<Array<[number, JobRow]>> {
  const result = await queryRows<JobRow & { ord: string }>(
    db,
    `WITH input AS (
       SELECT nextval('jobs_id_seq') AS id, t.*
       FROM unnest($1::varchar[], $2::jsonb[], $3::integer[], $4::timestamptz[], $5::bigint[],
                   $6::integer[], $7::varchar[]) WITH ORDINALITY
         AS t(job_type, data, priority, run_at, delay_ms, max_attempts, unique_key, ord)
     ), inserted AS (
       INSERT INTO jobs (id, job_type, data, priority, run_at, max_attempts, unique_key)
       SELECT id, job_type, data, priority,
              COALESCE(run_at, now() + delay_ms * interval '1 millisecond'), max_attempts, unique_key
       FROM input ORDER BY ord
       ON CONFLICT (unique_key)
         WHERE unique_key IS NOT NULL AND status IN ('pending', 'claimed', 'running')
         DO NOTHING
       RETURNING *
     )
     SELECT input.ord, inserted.* FROM inserted JOIN input USING (id)`,
    [
      rows.map((r) => r.jobType),
      rows.map((r) => r.dataJson),
      rows.map((r) => r.priority),
      rows.map((r) => r.runAt),
      rows.map((r) => r.delayMs),
      rows.map((r) => r.maxAttempts),
      rows.map((r) => r.uniqueKey),
    ],
  );
  return result.map(({ ord, ...row }) => [Number(ord) - 1, row]);
}

import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** Counts by type, then status (statuses with no jobs absent), as `job_stats.counts` holds them. */
export type JobCountsByType = Record<string, Record<string, number>>;

export interface JobStatsCountRow {
  counts: JobCountsByType;
  /** How long the counting statement took, by the database's clock. */
  count_ms: number;
}

/**
 * Counts jobs by type and status and stores the result as the snapshot, in one autocommit
 * statement. Parameters: $1 the schema's `lockKey('stats')`, $2 `statsIntervalMs`, $3 force.
 *
 * Unforced (the refresher) it counts only if it gets the transaction-scoped advisory lock (no
 * other node is counting) and the snapshot is due: none yet, or older than
 * max($2, 10 × the last count's duration), whoever wrote it. Otherwise the initplan `due` is
 * false and gates the scan off: the statement reads the one snapshot row and nothing of `jobs`.
 * Forced (`stats()` found no fresh snapshot) it always counts.
 *
 * `refreshed_at` is now(), the statement's start in autocommit: the count's MVCC snapshot is
 * taken then. `count_ms` is the clock from then to the projection, after the aggregate has read
 * every row. A count that started before the stored one never overwrites it (two nodes' forced
 * counts at once); the caller still gets its own counts back (`doc`, not the upsert's RETURNING).
 *
 * The count itself reads the whole table (no index holds every row's type and status): its cost
 * grows with the table, which is why it runs in the background, at most a tenth of the time.
 */
export const REFRESH_JOB_STATS = (schema: QueueSchema): string => `
  WITH lock AS (SELECT pg_catalog.pg_try_advisory_xact_lock($1::bigint) AS held),
  due AS (
    SELECT $3::boolean OR ((SELECT held FROM lock) AND NOT EXISTS (
      SELECT 1 FROM ${schema.jobStats} s
      WHERE s.refreshed_at > pg_catalog.now()
              - GREATEST($2::float8, 10::float8 * s.count_ms) * interval '1 millisecond'
    )) AS yes
  ), counted AS (
    SELECT j.job_type, j.status, pg_catalog.count(*) AS n
    FROM ${schema.jobs} j
    WHERE (SELECT yes FROM due)
    GROUP BY j.job_type, j.status
  ), by_type AS (
    SELECT counted.job_type, pg_catalog.jsonb_object_agg(counted.status, counted.n) AS counts
    FROM counted GROUP BY counted.job_type
  ), doc AS (
    SELECT COALESCE(pg_catalog.jsonb_object_agg(by_type.job_type, by_type.counts), '{}'::jsonb)
             AS counts,
           pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() - pg_catalog.now())
             * 1000::float8 AS count_ms
    FROM by_type
  ), stored AS (
    INSERT INTO ${schema.jobStats} AS s (id, counts, refreshed_at, count_ms)
    SELECT true, doc.counts, pg_catalog.now(), doc.count_ms FROM doc WHERE (SELECT yes FROM due)
    ON CONFLICT (id) DO UPDATE
      SET counts = excluded.counts, refreshed_at = excluded.refreshed_at,
          count_ms = excluded.count_ms
      WHERE s.refreshed_at < excluded.refreshed_at
  )
  SELECT doc.counts, doc.count_ms FROM doc WHERE (SELECT yes FROM due)`;

/**
 * Counts now and stores the snapshot when `force`, else only when due and no other node is
 * counting (see REFRESH_JOB_STATS); returns the counts, or undefined when it did not count.
 */
export async function refreshJobStats(
  db: Queryable,
  schemaName: string,
  intervalMs: number,
  force: boolean,
): Promise<JobStatsCountRow | undefined> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<JobStatsCountRow>(db, schema.statement(REFRESH_JOB_STATS), [
    schema.lockKey('stats'),
    intervalMs,
    force,
  ]);
  return row;
}

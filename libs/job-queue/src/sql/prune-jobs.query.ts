import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { ResolvedRetention } from '../options/resolved-options';

/** Most jobs one statement deletes: a big backlog of old jobs goes in bounded steps. */
export const PRUNE_BATCH_SIZE = 1_000;

/** What one prune statement deletes. */
export interface PruneCriteria {
  /** For job types without a stored retention (`job_types.retention_updated_at` NULL). */
  defaults: ResolvedRetention;
  /** Delete finished jobs older than this whatever their type's retention; null: by retention. */
  olderThanMs: number | null;
  /** Only these finished statuses; null: all three. */
  statuses: readonly string[] | null;
  /** Only these job types; null: every type. */
  types: readonly string[] | null;
}

/** Where a page of the prune's walk ended: the last row it read. */
export interface PruneCursor {
  jobType: string;
  status: string;
  /** Its `completed_at` in microseconds since the epoch, exactly (a Date holds milliseconds). */
  completedAtUs: string;
  id: string;
}

export interface PruneResult {
  /** False when another session held the lock: nothing was looked at. */
  held: boolean;
  deleted: number;
  /** Rows read and kept: an unfinished job depends on them. */
  kept: number;
  /** Rows read (deleted, kept, or deleted meanwhile by someone else). */
  read: number;
  /** The next page's cursor; null when the page read nothing. */
  cursor: PruneCursor | null;
}

interface PruneRow {
  held: boolean;
  deleted: number;
  kept: number;
  read: number;
  last_type: string | null;
  last_status: string | null;
  last_at_us: string | null;
  last_id: string | null;
}

const PRUNE_JOBS = (schema: QueueSchema): string => `
  SELECT f.held, f.deleted, f.kept, f.read, f.last_type, f.last_status,
         f.last_us::text AS last_at_us, f.last_id::text AS last_id
  FROM ${schema.quoted}.prune_jobs($1::bigint, $2::float8, $3::float8, $4::float8, $5::float8,
                                   $6::text[], $7::text[], $8::integer, $9::timestamptz,
                                   $10::text, $11::text, $12::bigint, $13::bigint) AS f`;

/**
 * Reads one page of up to `limit` finished jobs whose `completed_at` is older than their
 * retention at the queue's now (`now`; null: the statement's now()), after `after` (null: from
 * the start), and deletes those no unfinished job depends on (see `currentPruneJobsQuery` in
 * sql/functions/current-functions.ts, the statement `prune_jobs()` runs; the function with its
 * settings as installed is in libs/job-queue/schema.sql), type by type, status by status, oldest
 * first. With `lockKey`, only if this statement gets that transaction-scoped advisory lock
 * (`held` false otherwise): one node prunes a schema at a time, and as one autocommit statement
 * the lock lasts exactly as long as it.
 */
export async function pruneJobs(
  db: Queryable,
  schemaName: string,
  lockKey: string | null,
  criteria: PruneCriteria,
  limit = PRUNE_BATCH_SIZE,
  now: Date | null = null,
  after: PruneCursor | null = null,
): Promise<PruneResult> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<PruneRow>(db, schema.statement(PRUNE_JOBS), [
    lockKey,
    criteria.defaults.completedMs,
    criteria.defaults.failedMs,
    criteria.defaults.cancelledMs,
    criteria.olderThanMs,
    criteria.statuses,
    criteria.types,
    limit,
    now,
    after?.jobType ?? null,
    after?.status ?? null,
    after?.completedAtUs ?? null,
    after?.id ?? null,
  ]);
  return {
    held: row.held,
    deleted: row.deleted,
    kept: row.kept,
    read: row.read,
    cursor:
      row.last_type === null || row.last_status === null || !row.last_at_us || !row.last_id
        ? null
        : {
            jobType: row.last_type,
            status: row.last_status,
            completedAtUs: row.last_at_us,
            id: row.last_id,
          },
  };
}

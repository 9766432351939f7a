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

export interface PruneResult {
  /** False when another session held the lock: nothing was looked at. */
  held: boolean;
  deleted: number;
}

const PRUNE_JOBS = (schema: QueueSchema): string => `
  SELECT f.held, f.deleted
  FROM ${schema.quoted}.prune_jobs($1::bigint, $2::float8, $3::float8, $4::float8, $5::float8,
                                   $6::text[], $7::text[], $8::integer, $9::timestamptz) AS f`;

/**
 * Deletes up to `limit` finished jobs whose `completed_at` is older than their retention at the
 * queue's now (`now`; null: the statement's now()) (see
 * `currentPruneJobsQuery` in sql/functions/current-functions.ts, the statement `prune_jobs()`
 * runs; the function with its settings as installed is in libs/job-queue/schema.sql), oldest
 * first within each type and status. With `lockKey`, only if this statement gets that
 * transaction-scoped advisory lock (`held` false otherwise): one node prunes a schema at a time,
 * and as one autocommit statement the lock lasts exactly as long as it.
 */
export async function pruneJobs(
  db: Queryable,
  schemaName: string,
  lockKey: string | null,
  criteria: PruneCriteria,
  limit = PRUNE_BATCH_SIZE,
  now: Date | null = null,
): Promise<PruneResult> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<PruneResult>(db, schema.statement(PRUNE_JOBS), [
    lockKey,
    criteria.defaults.completedMs,
    criteria.defaults.failedMs,
    criteria.defaults.cancelledMs,
    criteria.olderThanMs,
    criteria.statuses,
    criteria.types,
    limit,
    now,
  ]);
  return row;
}

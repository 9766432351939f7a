import { QueueSchema } from '../queue-schema';
import { queueNowSql } from '../queue-now.sql';
import { pruneJobsStatement } from './prune-jobs.v1';

/**
 * The statement the second `prune_jobs()` signature runs, installed by PruneAtQueueTime
 * (1795939200014): V1's, with retention counted back from the queue's clock (`$9`, `p_now`:
 * NULL, the statement's now(), except where the testing kit moved the clock) instead of now().
 */
export const pruneJobsQueryV2 = (schema: QueueSchema): string =>
  pruneJobsStatement(schema, queueNowSql('$9'));

/** The first signature's argument types, as DROP, GRANT and ALTER FUNCTION name them. */
export const PRUNE_JOBS_V1_ARGUMENTS =
  'bigint, float8, float8, float8, float8, text[], text[], integer';

/** The second signature's: the first one's and `p_now`. */
export const PRUNE_JOBS_V2_ARGUMENTS = `${PRUNE_JOBS_V1_ARGUMENTS}, timestamptz`;

/**
 * The CREATE FUNCTION of PruneAtQueueTime: V1's function with `p_now` last, NULL by default (so
 * a call of the first signature's eight arguments resolves to it once that one is dropped), and
 * the settings V1 has by then (JIT off, AddJobRetention; nested loops only and no bitmap scans,
 * PinPrunePlan).
 */
export const createPruneJobsV2 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.quoted}.prune_jobs(
      p_lock_key bigint,
      p_completed_ms float8,
      p_failed_ms float8,
      p_cancelled_ms float8,
      p_older_than_ms float8,
      p_statuses text[],
      p_types text[],
      p_limit integer,
      p_now timestamptz DEFAULT NULL
    ) RETURNS TABLE (held boolean, deleted integer) LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
      SET jit = off
      SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off
    AS $fn$
    BEGIN
      RETURN QUERY ${pruneJobsQueryV2(schema)};
    END
    $fn$
  `;

import { QueueSchema } from './queue-schema';

/**
 * The CTE `types`: every job type with a row matching `statusCondition` (a predicate on `j`, of
 * constants), found by skipping through an index led by `job_type` (one descent per type, not a
 * read of every row; the predicate picks the partial index). `firstOnly` is added to the first
 * descent's WHERE only (`prune_jobs` gates the whole walk on its lock there). Ends in the last
 * type's row and a row of NULL: readers keep `types.job_type IS NOT NULL`.
 */
export const jobTypesSkipScanCte = (
  schema: QueueSchema,
  statusCondition: string,
  firstOnly = '',
): string => `types AS (
    (SELECT j.job_type FROM ${schema.jobs} j
     WHERE ${statusCondition}${firstOnly}
     ORDER BY j.job_type LIMIT 1)
    UNION ALL
    SELECT (SELECT j.job_type FROM ${schema.jobs} j
            WHERE ${statusCondition}
              AND j.job_type > types.job_type
            ORDER BY j.job_type LIMIT 1)
    FROM types WHERE types.job_type IS NOT NULL
  )`;

/** `statusCondition` of the finished statuses: `jobs_finished_idx`'s predicate. */
export const FINISHED_STATUS = `j.status IN ('completed', 'failed', 'cancelled')`;

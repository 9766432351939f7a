import { RATE_START_MARGIN_MS } from './functions/claim-job-batch.v5';
import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

// When the next start leaves a full window: a type's own (its oldest start in the window, once
// the window holds `rate_max`), or a key's whose jobs were set aside (`job_rate_blocked`). Only
// full windows: one with room has nothing to wait for. Read through job_rate_starts_window_idx
// and job_rate_blocked_opens_idx.
const NEXT_RATE_OPENING = (schema: QueueSchema): string => `
  WITH limited AS (
    SELECT lt.job_type, lt.rate_max,
           (lt.rate_per_ms + ${RATE_START_MARGIN_MS}) * interval '1 millisecond' AS span
    FROM ${schema.jobTypes} lt
    WHERE lt.job_type = ANY ($1::text[]) AND lt.rate_max IS NOT NULL AND NOT lt.rate_by_key
  ), openings AS (
    SELECT (SELECT min(s.started_at) FROM ${schema.jobRateStarts} s
            WHERE s.job_type = limited.job_type AND s.rate_key = ''
              AND s.started_at > clock_timestamp() - limited.span) + limited.span AS opens_at
    FROM limited
    WHERE (SELECT COALESCE(sum(s.starts), 0) FROM ${schema.jobRateStarts} s
           WHERE s.job_type = limited.job_type AND s.rate_key = ''
             AND s.started_at > clock_timestamp() - limited.span) >= limited.rate_max
    UNION ALL
    SELECT min(b.opens_at) FROM ${schema.jobRateBlocked} b WHERE b.job_type = ANY ($1::text[])
  )
  SELECT (EXTRACT(epoch FROM min(openings.opens_at) - clock_timestamp()) * 1000)::float8
           AS wait_ms
  FROM openings`;

/**
 * Milliseconds until a full rate window of `jobTypes` opens (0 or less: it has), or `null`
 * when none of them is at its rate limit.
 */
export async function nextRateOpening(
  db: Queryable,
  schema: string,
  jobTypes: readonly string[],
): Promise<number | null> {
  const rows = await queryRows<{ wait_ms: number | null }>(
    db,
    queueSchema(schema).statement(NEXT_RATE_OPENING),
    [jobTypes],
  );
  return rows[0]?.wait_ms ?? null;
}

import { Job } from '../../entities/job.entity';
import { JobRow, Queryable, queryRows, toJob } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';

/** What a tick read of a schedule and decided: see `fireSchedule`. */
export interface ScheduleFiring {
  name: string;
  /** The row's values the plan was made from; the write happens only if they still hold. */
  cron: string;
  timezone: string;
  catchUp: string;
  readNextFireAt: Date;
  /** One job per fire time, oldest first (may be empty: missed and skipped). */
  fireTimes: Date[];
  nextFireAt: Date | null;
  /** JSON of each job's `meta` (what the instruments captured), or null. */
  metaJson: string | null;
}

// The UPDATE is the compare-and-set: it matches only while the row holds what this node read, and
// the INSERT takes its rows from the UPDATE's, so the jobs exist only if this node advanced the
// schedule. A second node with the same plan waits for the first's row lock, then finds
// next_fire_at moved on and matches nothing.
const FIRE_SCHEDULE = (schema: QueueSchema): string => `
  WITH advanced AS (
    UPDATE ${schema.jobSchedules} AS s SET
      next_fire_at = $3::timestamptz,
      last_fire_at = COALESCE((SELECT pg_catalog.max(f) FROM pg_catalog.unnest($4::timestamptz[]) AS f),
                              s.last_fire_at),
      updated_at = pg_catalog.now()
    WHERE s.name = $1::text
      AND pg_catalog.date_trunc('milliseconds'::text, s.next_fire_at) = $2::timestamptz
      AND s.cron = $5::text AND s.timezone = $6::text AND s.catch_up = $7::text
    RETURNING s.job_type, s.data, s.priority, s.max_attempts
  ), inserted AS (
    INSERT INTO ${schema.jobs} (job_type, data, priority, max_attempts, run_at, status, meta)
    SELECT a.job_type, a.data, a.priority, a.max_attempts, f.fire_at,
           CASE WHEN f.fire_at > pg_catalog.now() THEN 'scheduled' ELSE 'pending' END,
           $8::jsonb
    FROM advanced AS a
      CROSS JOIN pg_catalog.unnest($4::timestamptz[]) WITH ORDINALITY AS f(fire_at, n)
    ORDER BY f.n
    RETURNING *
  )
  SELECT (SELECT pg_catalog.count(*)::integer FROM advanced) AS advanced, inserted.*
  FROM (SELECT) AS one LEFT JOIN inserted ON true
  ORDER BY inserted.id`;

/**
 * Moves a schedule on to `nextFireAt` and enqueues one job per fire time (run_at = the fire time,
 * so `job.runAt` tells a handler which one it serves), in one statement, only if the row still
 * holds the `next_fire_at`, cron, zone and catch-up this node planned from: each fire time yields
 * its jobs once, however many nodes tick. Returns the new jobs, oldest first, or `null` when
 * another node (or a `schedule()` call) got there first.
 */
export async function fireSchedule(
  db: Queryable,
  schemaName: string,
  firing: ScheduleFiring,
): Promise<Job[] | null> {
  const schema = queueSchema(schemaName);
  const rows = await queryRows<JobRow & { advanced: number }>(db, schema.statement(FIRE_SCHEDULE), [
    firing.name,
    firing.readNextFireAt,
    firing.nextFireAt,
    firing.fireTimes,
    firing.cron,
    firing.timezone,
    firing.catchUp,
    firing.metaJson,
  ]);
  // One row per job, or one of nulls beside `advanced` when there is none (missed and skipped).
  if (rows[0].advanced !== 1) return null;
  return rows.filter((row) => row.id !== null).map(toJob);
}

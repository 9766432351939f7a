import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';

/**
 * Longest pause between two recorded ticks (any node's start or end of a tick) that still counts
 * as one unbroken run of ticks: a few ticks' worth, so one late timer or a short stall of the
 * event loop does not break it, while an outage of every worker does.
 */
export const TICK_RUN_GAP_MS = 5_000;

/** A tick's clock, as `startCronTick` read it. */
export interface CronTickClock {
  /** The time every fire time of this tick is planned at: the database's now(), or the given one. */
  now: Date;
  /** Since when workers have ticked without a gap (this tick included); at or before `now`. */
  tickingSince: Date;
  /** The database's clock_timestamp() at the start: `endCronTick` measures the tick from it. */
  startedAt: Date;
}

// The one row is written by every tick of every node: a run goes on while the gap since the last
// recorded tick is at most $2 ms, and starts anew at this tick after a longer gap (every worker
// was down) or when this tick's time is before the run's start (a clock set back). A node that
// waits for another's row lock then sees that node's row (ON CONFLICT reads the latest version).
const START_CRON_TICK = (schema: QueueSchema): string => `
  WITH tick AS (
    SELECT COALESCE($1::timestamptz, pg_catalog.now()) AS now,
           pg_catalog.clock_timestamp() AS started_at
  ), recorded AS (
    INSERT INTO ${schema.jobScheduleTicks} AS k (id, ticking_since, ticked_at)
    SELECT true, tick.now, tick.now FROM tick
    ON CONFLICT (id) DO UPDATE SET
      ticking_since = CASE
        WHEN excluded.ticked_at < k.ticking_since
          OR excluded.ticked_at - k.ticked_at > $2::float8 * interval '1 millisecond'
        THEN excluded.ticked_at ELSE k.ticking_since END,
      ticked_at = CASE
        WHEN excluded.ticked_at < k.ticking_since
          OR excluded.ticked_at - k.ticked_at > $2::float8 * interval '1 millisecond'
        THEN excluded.ticked_at ELSE GREATEST(k.ticked_at, excluded.ticked_at) END
    RETURNING k.ticking_since
  )
  SELECT tick.now, recorded.ticking_since, tick.started_at FROM tick, recorded`;

/**
 * Starts a tick: reads its clock once (the database's now(), unless `now` is given: tests move
 * time by passing one) and records that a node ticked then, in `job_schedule_ticks`; returns
 * the clock and when the workers' current unbroken run of ticks began.
 */
export async function startCronTick(
  db: Queryable,
  schemaName: string,
  now: Date | null,
): Promise<CronTickClock> {
  const schema = queueSchema(schemaName);
  const [row] = await queryRows<{ now: Date; ticking_since: Date; started_at: Date }>(
    db,
    schema.statement(START_CRON_TICK),
    [now, TICK_RUN_GAP_MS],
  );
  return { now: row.now, tickingSince: row.ticking_since, startedAt: row.started_at };
}

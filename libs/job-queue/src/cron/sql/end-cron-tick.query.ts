import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';
import { CronTickClock } from './start-cron-tick.query';

// The tick's time plus how long it took by the database's clock: a tick given a time (a test's)
// ends that much after it, as one on now() ends at the database's time.
const END_CRON_TICK = (schema: QueueSchema): string => `
  UPDATE ${schema.jobScheduleTicks} AS k SET ticked_at = GREATEST(
    k.ticked_at, $1::timestamptz + (pg_catalog.clock_timestamp() - $2::timestamptz))`;

/**
 * Records that a tick was still going when it ended: fire times that came while it ran (a long
 * tick, many schedules due) came while a worker ticked, and the next tick enqueues each of them,
 * not as missed.
 */
export async function endCronTick(
  db: Queryable,
  schemaName: string,
  clock: CronTickClock,
): Promise<void> {
  const schema = queueSchema(schemaName);
  await queryRows(db, schema.statement(END_CRON_TICK), [clock.now, clock.startedAt]);
}

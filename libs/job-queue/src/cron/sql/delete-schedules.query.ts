import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';

const DELETE_SCHEDULE = (schema: QueueSchema): string =>
  `DELETE FROM ${schema.jobSchedules} WHERE name = $1::text RETURNING name`;

// Only rows a handler made: a schedule() of the same name is not the handler's to remove.
const DELETE_HANDLER_SCHEDULES = (schema: QueueSchema): string =>
  `DELETE FROM ${schema.jobSchedules} WHERE source = 'handler' AND name = ANY ($1::text[])
   RETURNING name`;

/** Deletes the schedule `name`; whether there was one. Jobs it enqueued stay. */
export async function deleteSchedule(
  db: Queryable,
  schemaName: string,
  name: string,
): Promise<boolean> {
  const schema = queueSchema(schemaName);
  const rows = await queryRows(db, schema.statement(DELETE_SCHEDULE), [name]);
  return rows.length > 0;
}

/** Deletes the handler-made schedules among `names`; returns the names deleted. */
export async function deleteHandlerSchedules(
  db: Queryable,
  schemaName: string,
  names: string[],
): Promise<string[]> {
  const schema = queueSchema(schemaName);
  const rows = await queryRows<{ name: string }>(db, schema.statement(DELETE_HANDLER_SCHEDULES), [
    names,
  ]);
  return rows.map((row) => row.name);
}

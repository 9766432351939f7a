import { Queryable, queryRows } from '../../sql/queryable';
import { QueueSchema, queueSchema } from '../../sql/queue-schema';
import { ScheduleRow, SCHEDULE_COLUMNS } from './schedule-columns';

const LIST_SCHEDULES = (schema: QueueSchema): string =>
  `SELECT ${SCHEDULE_COLUMNS} FROM ${schema.jobSchedules} ORDER BY name`;

/** Every schedule of the schema, by name. */
export function listSchedules(db: Queryable, schemaName: string): Promise<ScheduleRow[]> {
  const schema = queueSchema(schemaName);
  return queryRows<ScheduleRow>(db, schema.statement(LIST_SCHEDULES), []);
}

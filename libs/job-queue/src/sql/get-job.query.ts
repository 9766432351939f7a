import { Queryable, queryRows, JobRow } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

const GET_JOB = (schema: QueueSchema): string =>
  `SELECT * FROM ${schema.jobs} WHERE id = $1::bigint`;

export async function getJobRow(
  db: Queryable,
  schema: string,
  id: string,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, queueSchema(schema).statement(GET_JOB), [id]);
  return row;
}

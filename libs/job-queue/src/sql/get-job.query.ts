import { Queryable, queryRows, JobRow } from './queryable';

export async function getJobRow(db: Queryable, id: string): Promise<JobRow | undefined> {
  const [row] = await queryRows(db, `SELECT * FROM jobs WHERE id = $1`, [id]);
  return row;
}

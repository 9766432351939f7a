import { Queryable, queryRows, JobRow } from './queryable';

/** Cancels an unfinished job; returns its row, or nothing when no unfinished job has that id. */
export async function cancelJobRow(db: Queryable, id: string): Promise<JobRow | undefined> {
  const [row] = await queryRows(
    db,
    `UPDATE jobs SET status = 'cancelled', completed_at = now(), updated_at = now()
     WHERE id = $1 AND status IN ('pending', 'claimed', 'running')
     RETURNING *`,
    [id],
  );
  return row;
}

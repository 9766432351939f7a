import { Queryable, queryRows, JobRow } from './queryable';

/**
 * Records progress (and the stage, when given) on an unfinished job. Returns the job's row, or
 * nothing when no unfinished job has that id.
 */
export async function updateProgressRow(
  db: Queryable,
  id: string,
  progress: number,
  stage: string | undefined,
): Promise<JobRow | undefined> {
  const [row] = await queryRows(
    db,
    `UPDATE jobs SET
       progress = $2,
       current_stage = CASE WHEN $3::boolean THEN $4 ELSE current_stage END,
       events_count = events_count + 1,
       updated_at = now()
     WHERE id = $1 AND status IN ('pending', 'claimed', 'running')
     RETURNING *`,
    [id, progress, stage !== undefined, stage ?? null],
  );
  return row;
}

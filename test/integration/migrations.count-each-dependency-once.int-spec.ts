import { undoMigrationsThrough, useUnmigratedDataSource } from '../support/migrations';

const MIGRATION = 'CountEachDependencyOnce1795939200019';

/**
 * CountEachDependencyOnce recounts blocked jobs that an earlier release counted short (a
 * dependency that finished, was retried and finished again), and its trigger keeps counts right
 * from then on; down() drops the trigger and leaves counts as they are.
 */
describe('migration CountEachDependencyOnce', () => {
  const dataSource = useUnmigratedDataSource();
  const db = () => dataSource();

  const insert = async (type: string, status: string, unfinished = 0): Promise<string> => {
    const [row] = await db().query(
      `INSERT INTO job_queue.jobs (job_type, data, status, unfinished_dependencies,
         on_dependency_failure, has_dependants)
       VALUES ($1, '{}', $2, $3, CASE WHEN $3 > 0 THEN 'continue' END, $3 = 0)
       RETURNING id`,
      [type, status, unfinished],
    );
    return row.id;
  };
  const countOf = async (id: string) =>
    (
      await db().query(
        `SELECT status, unfinished_dependencies AS n FROM job_queue.jobs WHERE id = $1`,
        [id],
      )
    )[0];

  it('recounts a blocked job counted short, then counts a retried dependency once', async () => {
    await db().runMigrations();
    await undoMigrationsThrough(db(), MIGRATION);
    // Three dependencies: a completed, b and c pending. The earlier release counted a twice.
    const a = await insert('a', 'completed');
    const b = await insert('b', 'pending');
    const c = await insert('c', 'pending');
    const merge = await insert('merge', 'blocked', 1);
    await db().query(
      `INSERT INTO job_queue.job_dependencies (job_id, dependency_id)
       VALUES ($1, $2), ($1, $3), ($1, $4)`,
      [merge, a, b, c],
    );
    // Without the trigger, a retried a that completes again is counted again: 1 → 0.
    await db().query(`UPDATE job_queue.jobs SET status = 'pending' WHERE id = $1`, [a]);
    await db().query(`UPDATE job_queue.jobs SET status = 'blocked' WHERE id = $1`, [merge]);

    await db().runMigrations();
    expect(await countOf(merge)).toEqual({ status: 'blocked', n: 3 });
    await db().query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = ANY($1)`, [[a, b]]);
    expect(await countOf(merge)).toEqual({ status: 'blocked', n: 1 });
    await db().query(`UPDATE job_queue.jobs SET status = 'pending' WHERE id = $1`, [a]);
    await db().query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = $1`, [a]);
    expect(await countOf(merge)).toEqual({ status: 'blocked', n: 1 });

    await undoMigrationsThrough(db(), MIGRATION);
    await db().query(`UPDATE job_queue.jobs SET status = 'pending' WHERE id = $1`, [a]);
    expect(await countOf(merge)).toEqual({ status: 'blocked', n: 1 });
  });
});

import { JobPruner } from '../../libs/job-queue/src/maintenance/job-pruner';
import { useQueueTestingModule } from '../support/test-app';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Finished jobs that an unfinished job depends on are kept (their dependants read their
 * results). A prune pages past them: it deletes every prunable job, however many are kept before
 * it, and the report says how many it kept and why.
 */
describe('retention: pruning past the jobs kept for their dependants', () => {
  const app = useQueueTestingModule({ queueOptions: { retention: { completedMs: HOUR } } });
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    app.dataSource.query<T[]>(text, params);

  beforeEach(() =>
    sql(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_dependencies`),
  );

  /**
   * `kept` completed jobs that one blocked job depends on and `prunable` others, all finished
   * `agoMs` ago or more; with `interleaved`, the kept ones are every third job, else all oldest.
   */
  async function finished(kept: number, prunable: number, agoMs: number, interleaved = false) {
    await sql(
      `WITH made AS (
         INSERT INTO job_queue.jobs (job_type, status, completed_at, has_dependants)
         SELECT 'report.part', 'completed',
                now() - $3::float8 * interval '1 millisecond' - ($1::int + $2::int - g) * interval '1 ms',
                CASE WHEN $4::boolean THEN g % 3 = 0 AND g / 3 <= $1::int ELSE g <= $1::int END
         FROM generate_series(1, $1::int + $2::int) AS g
         RETURNING id, has_dependants
       ), merge AS (
         INSERT INTO job_queue.jobs (job_type, status, unfinished_dependencies,
                                     on_dependency_failure)
         VALUES ('report.merge', 'blocked', 1, 'fail') RETURNING id
       )
       INSERT INTO job_queue.job_dependencies (job_id, dependency_id)
       SELECT merge.id, made.id FROM merge, made WHERE made.has_dependants`,
      [kept, prunable, agoMs, interleaved],
    );
  }

  const left = async () =>
    (
      await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM job_queue.jobs WHERE status = 'completed'`,
      )
    )[0].n;

  it('deletes the newer jobs behind a thousand kept ones, in one call', async () => {
    await finished(1_000, 500, 2 * MINUTE);
    expect(await app.queue.prune({ olderThanMs: MINUTE })).toBe(500);
    expect(await left()).toBe(1_000);
  });

  it('pages through jobs kept among the others, and reports what it kept', async () => {
    await finished(400, 1_500, 2 * MINUTE, true);
    expect(await app.queue.prune({ olderThanMs: MINUTE, report: true })).toEqual({
      deleted: 1_500,
      kept: { dependants: 400 },
    });
    expect(await left()).toBe(400);
    expect(await app.queue.prune({ olderThanMs: MINUTE, report: true })).toEqual({
      deleted: 0,
      kept: { dependants: 400 },
    });
  });

  it("gets past them in the pruner's pass, by each type's retention", async () => {
    await finished(1_200, 700, 2 * HOUR);
    expect(await app.module.get(JobPruner).pruneOnce()).toBe(700);
    expect(await left()).toBe(1_200);
  });
});

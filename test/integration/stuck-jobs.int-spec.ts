import { Logger } from '@nestjs/common';
import { StaleJobReaper } from '../../libs/job-queue/src/maintenance/stale-job-reaper';
import { useQueueTestingModule } from '../support/test-app';

const MINUTE = 60_000;

/**
 * `stuckAfterMs`: the reaper's pass moves jobs that have waited that long for a key with no
 * running job and no rate window back to `pending`, and warns once per type. A job with a reason
 * to wait stays.
 */
describe('stuck waiting jobs', () => {
  const app = useQueueTestingModule({ queueOptions: { stuckAfterMs: 5 * MINUTE } });
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    app.dataSource.query<T[]>(text, params);
  const reaper = () => app.module.get(StaleJobReaper);

  beforeEach(() =>
    sql(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_rate_blocked`),
  );
  afterEach(() => jest.restoreAllMocks());

  /** A job of `type` on `key` in `status`, last changed `agoMs` ago; returns its id. */
  const job = async (type: string, key: string, status: string, agoMs: number) =>
    (
      await sql<{ id: string }>(
        `INSERT INTO job_queue.jobs (job_type, concurrency_key, status, updated_at)
         VALUES ($1, $2, $3, now() - $4::float8 * interval '1 millisecond') RETURNING id::text`,
        [type, key, status, agoMs],
      )
    )[0].id;
  const statusOf = async (id: string) =>
    (await sql<{ status: string }>(`SELECT status FROM job_queue.jobs WHERE id = $1`, [id]))[0]
      .status;

  it('moves the waiting jobs of a key nothing will release back to pending, and warns once per type', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const stuck = [
      await job('mail', 'tenant-1', 'waiting', 10 * MINUTE),
      await job('mail', 'tenant-1', 'waiting', MINUTE),
      await job('mail', 'tenant-2', 'waiting', 6 * MINUTE),
    ];
    expect(await reaper().releaseStuckOnce()).toEqual([
      { jobType: 'mail', moved: 3, oldestId: stuck[0] },
    ]);
    for (const id of stuck) expect(await statusOf(id)).toBe('pending');
    const lines = warn.mock.calls.map(([message]) => String(message));
    expect(lines).toEqual([
      `Job type mail: 3 job(s) waited over 300000 ms (stuckAfterMs) for a key with no running ` +
        `job and no rate window to release them, moved back to pending (oldest: job ${stuck[0]})`,
    ]);
    expect(await reaper().releaseStuckOnce()).toEqual([]);
  });

  it('leaves jobs with a reason to wait: a running job on the key, a rate window, a short wait', async () => {
    const held = await job('mail', 'busy', 'waiting', 10 * MINUTE);
    await job('mail', 'busy', 'running', 10 * MINUTE);
    const rated = await job('mail', 'windowed', 'waiting', 10 * MINUTE);
    await sql(
      `INSERT INTO job_queue.job_rate_blocked (job_type, rate_key, opens_at)
       VALUES ('mail', 'windowed', now() + interval '1 second')`,
    );
    const recent = await job('mail', 'fresh', 'waiting', MINUTE);
    expect(await reaper().releaseStuckOnce()).toEqual([]);
    for (const id of [held, rated, recent]) expect(await statusOf(id)).toBe('waiting');
  });
});

describe('stuck waiting jobs with stuckAfterMs: false', () => {
  const app = useQueueTestingModule({ queueOptions: { stuckAfterMs: false } });

  it('moves nothing', async () => {
    await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, concurrency_key, status, updated_at)
       VALUES ('mail', 'k', 'waiting', now() - interval '1 day')`,
    );
    expect(await app.module.get(StaleJobReaper).releaseStuckOnce()).toEqual([]);
    const [{ status }] = await app.dataSource.query(`SELECT status FROM job_queue.jobs`);
    expect(status).toBe('waiting');
  });
});

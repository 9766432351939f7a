import { Job, JobListPage, JobStatus, ListJobsQuery } from 'nest-pg-job-queue';
import { refusal } from '../support/refusal';
import { useQueueTestingModule } from '../support/test-app';

const cursorOf = (payload: string) => Buffer.from(payload, 'utf8').toString('base64url');

const TYPES = ['email', 'report', 'thumbnail'];
const STATUSES = Object.values(JobStatus);

describe('QueueService.listJobs', () => {
  const app = useQueueTestingModule();

  /** Every page of `query`, walked with its cursors until `nextCursor` is null. */
  async function walk(query: ListJobsQuery): Promise<JobListPage[]> {
    const pages: JobListPage[] = [];
    let cursor: string | undefined;
    do {
      const page = await app.queue.listJobs({ ...query, ...(cursor && { cursor }) });
      pages.push(page);
      cursor = page.nextCursor ?? undefined;
      if (pages.length > 1_000) throw new Error('more than 1,000 pages');
    } while (cursor);
    return pages;
  }

  const ids = (pages: JobListPage[]) => pages.flatMap((page) => page.jobs.map((job) => job.id));

  /** The ids the table holds for `where`, newest first: what a walk must return. */
  async function idsWhere(where: string, params: unknown[] = []): Promise<string[]> {
    const rows: Array<{ id: string }> = await app.dataSource.query(
      `SELECT id FROM job_queue.jobs WHERE ${where} ORDER BY id DESC`,
      params,
    );
    return rows.map((row) => String(row.id));
  }

  beforeAll(async () => {
    // 96 jobs: 3 types in turn, each status in turn (set by hand: no worker runs here).
    const jobs = await app.queue.enqueueMany(
      Array.from({ length: 96 }, (_, i) => ({
        type: TYPES[i % 3],
        data: { i, big: 'x'.repeat(100) },
      })),
    );
    for (const [i, job] of jobs.entries()) {
      const status = STATUSES[Math.floor(i / 3) % STATUSES.length];
      const blocked = status === JobStatus.Blocked;
      await app.dataSource.query(
        `UPDATE job_queue.jobs SET status = $2, result = $3::jsonb, last_error = $4,
                                   unfinished_dependencies = $5, on_dependency_failure = $6
         WHERE id = $1`,
        [
          job.id,
          status,
          status === 'completed' ? JSON.stringify({ i }) : null,
          status === 'failed' ? `boom ${i}` : null,
          blocked ? 1 : 0,
          blocked ? 'fail' : null,
        ],
      );
    }
  });

  it('pages through every job exactly once, newest first, nextCursor null on the last page', async () => {
    const pages = await walk({ limit: 7 });
    const all = await idsWhere('true');
    expect(all).toHaveLength(96);
    expect(ids(pages)).toEqual(all);
    expect(pages).toHaveLength(Math.ceil(96 / 7));
    expect(pages.slice(0, -1).every((page) => page.jobs.length === 7)).toBe(true);
    expect(pages[pages.length - 1].nextCursor).toBeNull();
    // A page that ends exactly at the last job says there is no next one.
    const exact = await walk({ limit: 48 });
    expect(exact.map((page) => page.jobs.length)).toEqual([48, 48]);
    expect(exact[1].nextCursor).toBeNull();
  });

  it('lists every column but data and meta', async () => {
    const { jobs } = await app.queue.listJobs({ status: JobStatus.Completed, limit: 1 });
    const full = await app.queue.getJob(jobs[0].id);
    expect(full.data).toMatchObject({ big: expect.any(String) });
    expect(jobs[0].data).toBeUndefined();
    expect(jobs[0].meta).toBeUndefined();
    const { data: _data, meta: _meta, ...rest } = full;
    expect(jobs[0]).toBeInstanceOf(Job);
    expect({ ...jobs[0] }).toEqual(rest);
    expect(jobs[0].result).toEqual(expect.objectContaining({ i: expect.any(Number) }));
  });

  it('does not shift pages for a job enqueued during a walk', async () => {
    const before = await idsWhere('true');
    const first = await app.queue.listJobs({ limit: 10 });
    const added = await app.queue.enqueue('email', { late: true });
    const rest = await walk({ limit: 10, cursor: first.nextCursor! });
    expect([...first.jobs.map((job) => job.id), ...ids(rest)]).toEqual(before);
    // A new walk starts with it.
    expect((await app.queue.listJobs({ limit: 1 })).jobs[0].id).toBe(added.id);
    await app.dataSource.query(`DELETE FROM job_queue.jobs WHERE id = $1`, [added.id]);
  });

  it.each([
    ['type', { type: 'report' }, `job_type = 'report'`],
    ['status', { status: JobStatus.Failed }, `status = 'failed'`],
    ['status with no jobs', { status: JobStatus.Waiting }, `false`],
    ['status blocked', { status: JobStatus.Blocked }, `status = 'blocked'`],
    [
      'type and status blocked',
      { type: 'report', status: JobStatus.Blocked },
      `job_type = 'report' AND status = 'blocked'`,
    ],
    [
      'type and status',
      { type: 'thumbnail', status: JobStatus.Pending },
      `job_type = 'thumbnail' AND status = 'pending'`,
    ],
  ] as Array<[string, ListJobsQuery, string]>)(
    'filters by %s, every page in order',
    async (_name, query, where) => {
      await app.dataSource.query(
        `UPDATE job_queue.jobs SET status = 'pending' WHERE status = 'waiting'`,
      );
      const expected = await idsWhere(where);
      for (const limit of [1, 3, 50]) {
        const pages = await walk({ ...query, limit });
        expect(ids(pages)).toEqual(expected);
        for (const job of pages.flatMap((page) => page.jobs)) {
          if (query.type) expect(job.jobType).toBe(query.type);
          if (query.status) expect(job.status).toBe(query.status);
        }
      }
    },
  );

  it('lists blocked jobs, with how many dependencies each waits for, filtered or not', async () => {
    const blocked = await idsWhere(`status = 'blocked'`);
    // Statuses go round by threes (a job of each type): the 4th of 9, four times in 96 jobs.
    expect(blocked).toHaveLength(12);
    const unfiltered = (await walk({ limit: 50 })).flatMap((page) => page.jobs);
    const listed = unfiltered.filter((job) => job.status === JobStatus.Blocked);
    expect(listed.map((job) => job.id)).toEqual(blocked);
    for (const job of listed) {
      expect(job).toMatchObject({ unfinishedDependencies: 1, onDependencyFailure: 'fail' });
    }
    const { jobs } = await app.queue.listJobs({ status: JobStatus.Blocked, type: 'email' });
    expect(jobs).toHaveLength(4);
    expect(jobs.every((job) => job.status === JobStatus.Blocked)).toBe(true);
  });

  it('filters by id: that job or none, with the other filters', async () => {
    const [newest] = await idsWhere('true');
    const job = await app.queue.getJob(newest);
    const one = await app.queue.listJobs({ id: newest });
    expect(one.jobs.map((j) => j.id)).toEqual([newest]);
    expect(one.nextCursor).toBeNull();
    expect((await app.queue.listJobs({ id: Number(newest) })).jobs).toHaveLength(1);
    expect((await app.queue.listJobs({ id: newest, type: job.jobType })).jobs).toHaveLength(1);
    const otherType = TYPES.find((type) => type !== job.jobType)!;
    expect(await app.queue.listJobs({ id: newest, type: otherType })).toEqual({
      jobs: [],
      nextCursor: null,
    });
    expect((await app.queue.listJobs({ id: '999999999' })).jobs).toEqual([]);
  });

  it('matches a unique-key prefix literally, among unfinished jobs only', async () => {
    const keyed = await app.queue.enqueueMany([
      { type: 'email', data: null, uniqueKey: 'user:1%:welcome' },
      { type: 'email', data: null, uniqueKey: 'user:1_:welcome' },
      { type: 'email', data: null, uniqueKey: 'user:12:welcome' },
      { type: 'email', data: null, uniqueKey: 'user:1\\:welcome' },
      { type: 'report', data: null, uniqueKey: 'user:1%:report', uniqueForMs: 60_000 },
      {
        type: 'email',
        data: null,
        uniqueKey: 'user:1%:done',
        uniqueStates: [
          JobStatus.Scheduled,
          JobStatus.Pending,
          JobStatus.Waiting,
          JobStatus.Claimed,
          JobStatus.Running,
          JobStatus.Completed,
        ],
      },
    ]);
    const [percent, underscore, twelve, backslash, windowed, finished] = keyed.map((j) => j.id);
    await app.dataSource.query(`UPDATE job_queue.jobs SET status = 'completed' WHERE id = $1`, [
      finished,
    ]);
    const listed = async (query: ListJobsQuery) =>
      ids(await walk({ ...query, limit: 1 })).sort((a, b) => Number(b) - Number(a));
    // Newest first: ids grow in enqueue order.
    expect(await listed({ uniqueKeyPrefix: 'user:1%' })).toEqual([windowed, percent]);
    expect(await listed({ uniqueKeyPrefix: 'user:1_' })).toEqual([underscore]);
    expect(await listed({ uniqueKeyPrefix: 'user:1\\' })).toEqual([backslash]);
    expect(await listed({ uniqueKeyPrefix: 'user:1' })).toEqual([
      windowed,
      backslash,
      twelve,
      underscore,
      percent,
    ]);
    expect(await listed({ uniqueKeyPrefix: 'user:1%', type: 'report' })).toEqual([windowed]);
    expect(await listed({ uniqueKeyPrefix: 'user:1%', status: JobStatus.Completed })).toEqual([]);
    expect(await listed({ uniqueKeyPrefix: 'user:1%:done' })).toEqual([]);
    expect(await listed({ uniqueKeyPrefix: 'user:1%', id: percent })).toEqual([percent]);
    expect(await listed({ uniqueKeyPrefix: 'user:2', id: percent })).toEqual([]);
    // The job shows the caller's key, not the stored key with its window.
    const { jobs } = await app.queue.listJobs({ uniqueKeyPrefix: 'user:1%:report' });
    expect(jobs.map((job) => job.uniqueKey)).toEqual(['user:1%:report']);
    await app.dataSource.query(`DELETE FROM job_queue.jobs WHERE id = ANY($1::bigint[])`, [
      keyed.map((job) => job.id),
    ]);
  });

  it('pages 50 jobs by default and at most 500', async () => {
    const added = await app.queue.enqueueMany(
      Array.from({ length: 520 }, (_, i) => ({ type: 'bulk', data: { i } })),
    );
    expect((await app.queue.listJobs()).jobs).toHaveLength(50);
    const biggest = await app.queue.listJobs({ type: 'bulk', limit: 500 });
    expect(biggest.jobs).toHaveLength(500);
    const last = await app.queue.listJobs({
      type: 'bulk',
      limit: 500,
      cursor: biggest.nextCursor!,
    });
    expect(last.jobs).toHaveLength(20);
    expect(last.nextCursor).toBeNull();
    await app.dataSource.query(`DELETE FROM job_queue.jobs WHERE id = ANY($1::bigint[])`, [
      added.map((job) => job.id),
    ]);
  });

  it('answers a well-formed cursor below every job with an empty last page', async () => {
    expect(await app.queue.listJobs({ cursor: cursorOf('{"id":"1"}') })).toEqual({
      jobs: [],
      nextCursor: null,
    });
  });

  it.each([
    ['limit', { limit: 0 }],
    ['limit', { limit: 501 }],
    ['limit', { limit: 2.5 }],
    ['limit', { limit: '10' }],
    ['status', { status: 'done' }],
    ['type', { type: '   ' }],
    ['type', { type: '' }],
    ['id', { id: 0 }],
    ['id', { id: 'abc' }],
    ['uniqueKeyPrefix', { uniqueKeyPrefix: '' }],
    ['uniqueKeyPrefix', { uniqueKeyPrefix: 'a\u001fb' }],
    ['cursor', { cursor: 'not a cursor!' }],
    ['cursor', { cursor: cursorOf('{"id":5}') }],
    ['cursor', { cursor: cursorOf('{"id":"0"}') }],
    ['cursor', { cursor: cursorOf('{"id":"05"}') }],
    ['cursor', { cursor: cursorOf('{"id":"9223372036854775808"}') }],
    ['cursor', { cursor: cursorOf('{"id":"5","offset":10}') }],
    ['cursor', { cursor: cursorOf('["5"]') }],
    ['cursor', { cursor: `${cursorOf('{"id":"5"}')}=` }],
    ['cursor', { cursor: 5 }],
    ['offset', { offset: 10 }],
  ] as Array<[string, unknown]>)('refuses a bad %s (%j) naming it', async (field, query) => {
    const error = await refusal(app.queue.listJobs(query as ListJobsQuery));
    expect(error.field).toBe(field);
    const [[, value]] = Object.entries(query as object);
    expect(error.value).toEqual(value);
    expect(error.message).toContain(field);
  });

  it('refuses a query that is not an object', async () => {
    const error = await refusal(app.queue.listJobs(null as unknown as ListJobsQuery));
    expect(error.field).toBe('query');
  });
});

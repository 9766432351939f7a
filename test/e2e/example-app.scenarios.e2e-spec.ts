import { BULK_IMPORT_PRIORITY } from '../../src/images/images.constants';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

/** A job as the example app's routes answer it (src/jobs/job.response.ts, as JSON). */
interface JobJson {
  id: string;
  type: string;
  priority: number;
  status: string;
  progress: number;
  stage: string | null;
  startedAt: string | null;
  completedAt: string | null;
  attempts: number;
  lastError: string | null;
  result: unknown;
}

interface JobPage {
  items: JobJson[];
  nextCursor: string | null;
}

const IMAGE_WORK_MS = 40;
const REPORT_STAGE_MS = 400;
/** The dead worker's lease outlives its last heartbeat by this much before the reaper acts. */
const STALE_AFTER_MS = 5_000;
const REAPER_INTERVAL_MS = 100;
const BACKLOG = 50;
const UPLOADS = ['cat.png', 'dog.png', 'owl.png'];
/** A report's mid-way states: the progress each stage starts at. */
const STAGE_PROGRESS: Record<string, number> = { aggregating: 20, rendering: 50, uploading: 80 };

const time = (iso: string | null): number => {
  expect(iso).not.toBeNull();
  return Date.parse(iso!);
};

/**
 * The example app (`src/app.module.ts`, booted as `npm start` boots it) driven over HTTP through
 * the three stories it exists to tell: uploads overtake a backlog, a report shows its progress,
 * a dead worker's job is listed as stale and recovered. One worker slot (WORKER_CONCURRENCY=1)
 * makes the order of runs the order of claims.
 */
describe('example app: the three scenarios over HTTP', () => {
  let example: ExampleApp;

  const getJob = async (id: string): Promise<JobJson> =>
    (await example.http().get(`/jobs/${id}`).expect(200)).body as JobJson;

  const waitForJob = (
    id: string,
    done: (job: JobJson) => boolean,
    what: string,
    timeoutMs = 20_000,
  ) =>
    waitFor(
      async () => {
        const job = await getJob(id);
        return done(job) ? job : undefined;
      },
      { timeoutMs, description: `job ${id} ${what}` },
    );

  /** Every page of GET /jobs with `query`, following nextCursor to the end (bounded). */
  const listPages = async (query: Record<string, string | number>): Promise<JobPage[]> => {
    const pages: JobPage[] = [];
    let cursor: string | null = null;
    do {
      const body = (
        await example
          .http()
          .get('/jobs')
          .query({ ...query, ...(cursor !== null && { cursor }) })
          .expect(200)
      ).body as JobPage;
      pages.push(body);
      cursor = body.nextCursor;
    } while (cursor !== null && pages.length < 1_000);
    return pages;
  };

  /** Every image job of the app, across pages. */
  const imageJobs = async (status?: string): Promise<JobJson[]> =>
    (await listPages({ type: 'image.process', limit: 200, ...(status && { status }) })).flatMap(
      (page) => page.items,
    );

  const waitUntilNoImageJobUnfinished = () =>
    waitFor(
      async () => {
        const { body } = await example.http().get('/jobs/stats?maxAgeMs=0').expect(200);
        const counts = body['image.process'] ?? {};
        return counts.pending + counts.claimed + counts.running === 0;
      },
      { timeoutMs: 30_000, description: 'every image job finished' },
    );

  beforeAll(async () => {
    example = await startExampleApp({
      WORKER_CONCURRENCY: 1,
      IMAGE_WORK_MS,
      REPORT_STAGE_MS,
      STALE_AFTER_MS,
      REAPER_INTERVAL_MS,
    });
  });

  afterAll(async () => {
    await example?.close();
  });

  it('runs uploads posted after a bulk backfill before the backfill jobs still waiting', async () => {
    const bulk = await example.http().post('/images/bulk').send({ count: BACKLOG }).expect(201);
    expect(bulk.body).toEqual({
      enqueued: BACKLOG,
      firstId: expect.any(String),
      lastId: expect.any(String),
    });
    const uploadIds = (
      await Promise.all(
        UPLOADS.map((name) => example.http().post('/images').send({ name }).expect(201)),
      )
    ).map(({ body }) => {
      expect(body).toMatchObject({ type: 'image.process', priority: 200, status: 'pending' });
      return (body as JobJson).id;
    });

    // Every upload is in the queue now. The backfill jobs still pending at this point are the
    // ones the uploads must overtake: with one slot, each later claim takes an upload while any
    // is left. (The few the worker already took keep their slot: no preemption.)
    const pending = (await imageJobs('pending')).filter(
      (job) => job.priority === BULK_IMPORT_PRIORITY,
    );
    // A claim already under way as they were read began before the last upload committed, so
    // it could not see it: the jobs it takes are not overtaken. Claims stamp `claimed_at` with
    // their transaction's start; the ones that began after this read saw every upload.
    const { rows: readAt } = await example.sql.query<{ now: Date }>('SELECT now() AS now');
    expect(pending.length).toBeGreaterThan(BACKLOG / 2);

    await waitUntilNoImageJobUnfinished();
    const { rows: claimedLater } = await example.sql.query<{ id: string }>(
      `SELECT id::text AS id FROM job_queue.jobs
       WHERE id = ANY ($1::bigint[]) AND claimed_at >= $2 ORDER BY id`,
      [pending.map((job) => job.id), readAt[0].now],
    );
    const waiting = pending.filter((job) => claimedLater.some((row) => row.id === String(job.id)));
    expect(waiting.length).toBeGreaterThan(BACKLOG / 4);
    const uploads = await Promise.all(uploadIds.map(getJob));
    const backlog = await Promise.all(waiting.map((job) => getJob(job.id)));
    for (const job of [...uploads, ...backlog]) {
      expect(job).toMatchObject({ status: 'completed', attempts: 1 });
    }
    expect(uploads.map((job) => job.result)).toEqual(
      UPLOADS.map((name) => ({ thumbnail: `thumbs/${name}` })),
    );

    const lastUploadStarted = Math.max(...uploads.map((job) => time(job.startedAt)));
    const lastUploadCompleted = Math.max(...uploads.map((job) => time(job.completedAt)));
    for (const job of backlog) {
      // A job the worker claimed ahead of its slot (prefetch) is dated by that claim: one claim
      // may take the last upload and a backfill job, which then starts after it, by priority.
      expect(time(job.startedAt)).toBeGreaterThanOrEqual(lastUploadStarted);
      // Outcomes are written in the order the runs end, possibly several in one statement.
      expect(time(job.completedAt)).toBeGreaterThanOrEqual(lastUploadCompleted);
    }
    // Among themselves the backfill jobs keep their order: oldest first. Jobs of one claim share
    // its time, and start in the claim's order (by id, here: one created_at).
    const byStart = [...backlog].sort(
      (a, b) => time(a.startedAt) - time(b.startedAt) || Number(a.id) - Number(b.id),
    );
    expect(byStart.map((job) => job.id)).toEqual(
      [...backlog].sort((a, b) => Number(a.id) - Number(b.id)).map((job) => job.id),
    );
  });

  it('shows a report part-way through its stages, then at 100 % with its result', async () => {
    const { body: report } = await example
      .http()
      .post('/reports')
      .send({ month: '2026-11' })
      .expect(201);
    expect(report).toMatchObject({ type: 'report_generation', status: 'pending', progress: 0 });
    // At most one unfinished report per month: asking again answers the same job.
    const again = await example.http().post('/reports').send({ month: '2026-11' }).expect(201);
    expect(again.body.id).toBe(report.id);

    const midway = await waitForJob(
      report.id,
      (job) => job.progress > 0 && job.progress < 100,
      'part-way through',
      10_000,
    );
    expect(midway.status).toBe('running');
    expect(Object.keys(STAGE_PROGRESS)).toContain(midway.stage);
    expect(midway.progress).toBe(STAGE_PROGRESS[midway.stage!]);

    const done = await waitForJob(report.id, (job) => job.status === 'completed', 'completed');
    expect(done).toMatchObject({
      progress: 100,
      stage: 'done',
      attempts: 1,
      result: { month: '2026-11', rows: 1200, url: 'reports/2026-11.pdf' },
    });
  });

  it('lists the job of a killed worker as stale, then the reaper recovers it and it completes', async () => {
    // A worker claimed this job an hour ago, made no progress since, sent its last heartbeat just
    // now and was killed. Inserted and claimed in one transaction, so the app's own worker never
    // sees it pending; claim_job_batch's `p_now` dates the claim.
    await example.sql.query('BEGIN');
    const {
      rows: [{ id }],
    } = await example.sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, priority, run_at)
       VALUES ('image.process', '{"name": "orphan.png", "source": "upload"}', 200,
               now() - interval '2 hours')
       RETURNING id::text`,
    );
    const { rows: claimed } = await example.sql.query<{ id: string }>(
      `SELECT id::text FROM job_queue.claim_job_batch('killed-worker', ARRAY['image.process'], 1,
                                            now() - interval '1 hour')`,
    );
    expect(claimed).toEqual([{ id }]);
    await example.sql.query(`UPDATE job_queue.jobs SET heartbeat_at = now() WHERE id = $1`, [id]);
    await example.sql.query('COMMIT');

    // Its lease still runs for STALE_AFTER_MS: the operator sees it before the reaper acts.
    const { body: stale } = await example
      .http()
      .get('/jobs/stale')
      .query({ olderThanMinutes: 30 })
      .expect(200);
    // The API does not name the worker (its host and pid): the table does, for operators.
    expect(stale).toEqual([expect.objectContaining({ id, status: 'claimed', attempts: 1 })]);
    expect(stale[0]).not.toHaveProperty('workerId');
    // The default threshold (10 minutes) lists it too.
    const byDefault = await example.http().get('/jobs/stale').expect(200);
    expect((byDefault.body as JobJson[]).map((job) => job.id)).toEqual([id]);

    const recovered = await waitForJob(
      id,
      (job) => job.status === 'completed',
      'recovered and completed',
      STALE_AFTER_MS + 15_000,
    );
    expect(recovered.attempts).toBe(2);
    expect(recovered.lastError).toMatch(/^Its worker stopped heartbeating during attempt 1\b/);
    expect(recovered.lastError).not.toContain('killed-worker');
    expect(recovered.result).toEqual({ thumbnail: 'thumbs/orphan.png' });
    const { rows } = await example.sql.query<{ worker_id: string | null; last_error: string }>(
      'SELECT worker_id, last_error FROM job_queue.jobs WHERE id = $1',
      [id],
    );
    expect(rows[0].worker_id).not.toBe('killed-worker');
    expect(rows[0].last_error).toContain('Worker killed-worker stopped heartbeating');
    const after = await example.http().get('/jobs/stale').query({ olderThanMinutes: 0 });
    expect((after.body as JobJson[]).map((job) => job.id)).not.toContain(id);
  });

  it('cancels a running report, which stops it, and retries it to completion', async () => {
    // This run's stages would last a minute (the handler reads REPORT_STAGE_MS as it starts):
    // it is surely still running when cancelled, and only the cancel can free the one slot.
    process.env.REPORT_STAGE_MS = String(60_000);
    let report: JobJson;
    try {
      report = (await example.http().post('/reports').send({ month: '2026-10' }).expect(201))
        .body as JobJson;
      await waitForJob(report.id, (job) => job.status === 'running', 'running');
    } finally {
      process.env.REPORT_STAGE_MS = String(REPORT_STAGE_MS);
    }

    const cancelled = await example.http().post(`/jobs/${report.id}/cancel`).expect(201);
    expect(cancelled.body).toMatchObject({ id: report.id, status: 'cancelled' });
    const again = await example.http().post(`/jobs/${report.id}/cancel`).expect(409);
    expect(again.body.message).toContain(report.id);

    // The retry can only run once the cancelled run gave its slot back, long before its minute.
    const retried = await example.http().post(`/jobs/${report.id}/retry`).expect(201);
    expect(retried.body).toMatchObject({ id: report.id, status: 'pending' });
    const done = await waitForJob(report.id, (job) => job.status === 'completed', 'completed');
    expect(done).toMatchObject({ progress: 100, attempts: 1, result: { month: '2026-10' } });
    await example.http().post(`/jobs/${report.id}/retry`).expect(409);
  });

  it('pages through completed image jobs, newest first, matching the stats', async () => {
    await waitUntilNoImageJobUnfinished();
    const { body: stats } = await example.http().get('/jobs/stats?maxAgeMs=0').expect(200);
    expect(stats['image.process']).toEqual({
      scheduled: 0,
      pending: 0,
      waiting: 0,
      blocked: 0,
      claimed: 0,
      running: 0,
      completed: expect.any(Number),
      failed: 0,
      cancelled: 0,
      paused: false,
    });
    const completed: number = stats['image.process'].completed;
    expect(completed).toBeGreaterThan(BACKLOG);
    expect(stats.report_generation).toMatchObject({ completed: 2 });

    const limit = 20;
    const pages = await listPages({ status: 'completed', type: 'image.process', limit });
    // Full pages, then the rest; a count that divides evenly ends on a full page, not an empty one.
    expect(pages.map((page) => page.items.length)).toEqual([
      ...Array(Math.floor(completed / limit)).fill(limit),
      ...(completed % limit ? [completed % limit] : []),
    ]);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    const items = pages.flatMap((page) => page.items);
    for (const job of items)
      expect(job).toMatchObject({ type: 'image.process', status: 'completed' });
    const ids = items.map((job) => Number(job.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(completed);
  });
});

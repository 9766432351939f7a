import { errorText } from '../../libs/job-queue/src/worker/error-text';
import { ExampleApp, startExampleApp } from '../support/example-app';

/** The fields of src/jobs/job.response.ts, and only those. */
const FIELDS = [
  'attempts',
  'completedAt',
  'createdAt',
  'id',
  'lastError',
  'maxAttempts',
  'priority',
  'progress',
  'result',
  'runAt',
  'stage',
  'startedAt',
  'status',
  'type',
];

/** The worker's name as the queue makes it: host, pid, random. */
const WORKER = 'web-7.internal:4242:9f3a2c';
const FILE_PATH = '/srv/uploads/missing-cat.png';

/** What a handler's throw leaves in `last_error` (the worker stores errorText of it). */
function thrownText(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return errorText(error);
  }
  throw new Error('did not throw');
}

/** Text a client must not see: a stack line, an absolute path, the worker's host. */
function expectNoInternals(json: unknown): void {
  const text = JSON.stringify(json);
  expect(text).not.toContain('    at ');
  expect(text).not.toMatch(/\\n/);
  expect(text).not.toContain('web-7.internal');
  expect(text).not.toContain(process.cwd());
  expect(text).not.toContain(FILE_PATH);
  // Any absolute path: a slash after a space, a quote, a bracket or the start of a string.
  expect(text).not.toMatch(/(^|[\s'"(])\/[\w.-]+\//);
}

function expectJobResponse(job: Record<string, unknown>): void {
  expect(Object.keys(job).sort()).toEqual(FIELDS);
  expect(job).not.toHaveProperty('workerId');
  expectNoInternals(job);
}

/**
 * A job's JSON (every route that answers one, admin or not) shows where the job is and what came
 * of it: never which worker ran it (host and pid), and of its last error only the message, without
 * the stack or file paths. The full text stays in the table for operators.
 */
describe('example app: what a job looks like over HTTP', () => {
  let example: ExampleApp;
  let failedId: string;
  let noFileId: string;
  let rescuedId: string;
  let runningId: string;

  const insert = async (columns: Record<string, unknown>): Promise<string> => {
    const names = Object.keys(columns);
    const { rows } = await example.sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, ${names.join(', ')})
       VALUES ('image.process', '{"name": "cat.png", "source": "upload"}',
               ${names.map((_, i) => `$${i + 1}`).join(', ')})
       RETURNING id::text`,
      Object.values(columns),
    );
    return rows[0].id;
  };

  const finished = { attempts: 5, started_at: new Date(), completed_at: new Date() };

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 1 });
    failedId = await insert({
      ...finished,
      status: 'failed',
      worker_id: WORKER,
      last_error: thrownText(() => {
        throw new Error('Thumbnail service answered 503');
      }),
    });
    noFileId = await insert({
      ...finished,
      status: 'failed',
      worker_id: WORKER,
      // As fs.readFileSync words it (an error of the test's own realm: Jest's sandbox has two).
      last_error: thrownText(() => {
        throw new Error(`ENOENT: no such file or directory, open '${FILE_PATH}'`);
      }),
    });
    rescuedId = await insert({
      ...finished,
      status: 'failed',
      last_error: `Worker ${WORKER} stopped heartbeating during attempt 5, the last one`,
    });
    // Held by a worker for an hour (its heartbeat is fresh: the reaper leaves it alone).
    const hourAgo = new Date(Date.now() - 3_600_000);
    runningId = await insert({
      status: 'running',
      worker_id: WORKER,
      attempts: 1,
      claimed_at: hourAgo,
      started_at: hourAgo,
      heartbeat_at: new Date(),
      updated_at: hourAgo,
    });
  });

  afterAll(async () => {
    await example?.close();
  });

  it('has the stacks, paths and worker names in the table (what the routes must not show)', async () => {
    const { rows } = await example.sql.query<{ id: string; worker_id: string; last_error: string }>(
      `SELECT id::text, worker_id, last_error FROM job_queue.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[failedId, noFileId]],
    );
    for (const row of rows) {
      expect(row.worker_id).toBe(WORKER);
      expect(row.last_error).toContain('\n    at ');
      expect(row.last_error).toContain(__filename);
    }
    expect(rows[1].last_error).toContain(FILE_PATH);
  });

  it('GET /jobs/:id shows the message of the last error only', async () => {
    const answers = await Promise.all(
      [failedId, noFileId, rescuedId, runningId].map(
        async (id) => (await example.http().get(`/jobs/${id}`).expect(200)).body,
      ),
    );
    answers.forEach(expectJobResponse);
    expect(answers.map((job) => job.lastError)).toEqual([
      'Error: Thumbnail service answered 503',
      "Error: ENOENT: no such file or directory, open '<path>'",
      'Its worker stopped heartbeating during attempt 5, the last one',
      null,
    ]);
    expect(answers[3]).toMatchObject({ id: runningId, status: 'running', attempts: 1 });
  });

  it('GET /jobs lists jobs the same way', async () => {
    const { body } = await example.http().get('/jobs').expect(200);
    expect(body.items.map((job: { id: string }) => job.id).sort()).toEqual(
      [failedId, noFileId, rescuedId, runningId].sort(),
    );
    body.items.forEach(expectJobResponse);
    const failed = await example.http().get('/jobs?status=failed').expect(200);
    expect(failed.body.items).toHaveLength(3);
    failed.body.items.forEach(expectJobResponse);
  });

  it('GET /jobs/stale lists the held job without its worker', async () => {
    const { body } = await example.http().get('/jobs/stale?olderThanMinutes=30').expect(200);
    expect(body).toEqual([expect.objectContaining({ id: runningId, status: 'running' })]);
    body.forEach(expectJobResponse);
  });

  it('POST /jobs/:id/cancel and /retry answer the job the same way', async () => {
    const cancelled = await example.http().post(`/jobs/${runningId}/cancel`).expect(201);
    expect(cancelled.body).toMatchObject({ id: runningId, status: 'cancelled' });
    expectJobResponse(cancelled.body);
    const retried = await example.http().post(`/jobs/${failedId}/retry`).expect(201);
    expect(retried.body).toMatchObject({ id: failedId, status: 'pending' });
    expectJobResponse(retried.body);
  });

  it('the enqueue routes answer the new job the same way, to anyone', async () => {
    const upload = await example.anonymous().post('/images').send({ name: 'dog.png' }).expect(201);
    expect(upload.body).toMatchObject({ type: 'image.process', status: 'pending', priority: 200 });
    expectJobResponse(upload.body);
    const report = await example.anonymous().post('/reports').send({ month: '2026-08' });
    expect(report.status).toBe(201);
    expect(report.body).toMatchObject({ type: 'report_generation', status: 'pending' });
    expectJobResponse(report.body);
  });
});

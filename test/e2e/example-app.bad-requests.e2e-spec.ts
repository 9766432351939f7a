import { CapturingLogger } from '../support/capturing-logger';
import { ExampleApp, startExampleApp } from '../support/example-app';

interface BadRequest {
  what: string;
  method: 'get' | 'post';
  path: string;
  /** The JSON body, if any. */
  body?: unknown;
  status: 400 | 404;
  field: string;
}

const UNKNOWN_ID = '987654321';

const post = (path: string, body: unknown, what: string, field: string): BadRequest => ({
  what,
  method: 'post',
  path,
  body,
  status: 400,
  field,
});
const get = (path: string, what: string, field: string, status: 400 | 404 = 400): BadRequest => ({
  what,
  method: 'get',
  path,
  status,
  field,
});

const CASES: BadRequest[] = [
  // POST /images
  { what: 'no body', method: 'post', path: '/images', status: 400, field: 'body' },
  post('/images', {}, 'name missing', 'name'),
  post('/images', { name: 42 }, 'name a number', 'name'),
  post('/images', { name: '' }, 'name empty', 'name'),
  post('/images', { name: 'x'.repeat(256) }, 'name too long', 'name'),
  post('/images', ['cat.png'], 'an array for a body', 'body'),
  post('/images', { name: 'cat\u0000.png' }, 'name with NUL', 'name'),
  post('/images', { name: 'cat\ud800.png' }, 'name with a lone surrogate', 'name'),
  // POST /images/bulk
  post('/images/bulk', {}, 'count missing', 'count'),
  post('/images/bulk', { count: 'five' }, 'count not a number', 'count'),
  post('/images/bulk', { count: '5' }, 'count a string of digits', 'count'),
  post('/images/bulk', { count: 2.5 }, 'count not an integer', 'count'),
  post('/images/bulk', { count: 0 }, 'count below 1', 'count'),
  post('/images/bulk', { count: 10_001 }, 'count above the maximum', 'count'),
  post('/images/bulk', { count: 5, prefix: 7 }, 'prefix a number', 'prefix'),
  post('/images/bulk', { count: 5, prefix: 'a\u0000' }, 'prefix with NUL', 'prefix'),
  post('/images/bulk', { count: 5, prefix: '\udc00a' }, 'prefix with a lone surrogate', 'prefix'),
  // POST /reports
  post('/reports', {}, 'month missing', 'month'),
  post('/reports', { month: 202611 }, 'month a number', 'month'),
  post('/reports', { month: '2026-13' }, 'month out of range', 'month'),
  post('/reports', { month: 'November' }, 'month in words', 'month'),
  // /jobs/:id
  get(`/jobs/${UNKNOWN_ID}`, 'unknown job id', 'id', 404),
  get('/jobs/abc', 'non-numeric job id', 'id'),
  get('/jobs/0', 'job id 0', 'id'),
  get('/jobs/1.5', 'fractional job id', 'id'),
  get('/jobs/99999999999999999999', 'job id beyond bigint', 'id'),
  { ...post('/jobs/abc/cancel', undefined, 'cancel: non-numeric id', 'id') },
  { ...post(`/jobs/${UNKNOWN_ID}/cancel`, undefined, 'cancel: unknown id', 'id'), status: 404 },
  { ...post('/jobs/abc/retry', undefined, 'retry: non-numeric id', 'id') },
  { ...post(`/jobs/${UNKNOWN_ID}/retry`, undefined, 'retry: unknown id', 'id'), status: 404 },
  // POST /jobs/types/:type/pause and /resume
  post(`/jobs/types/${'x'.repeat(256)}/pause`, undefined, 'pause: type too long', 'type'),
  post('/jobs/types/a%00b/pause', undefined, 'pause: type with NUL', 'type'),
  post('/jobs/types/%20/resume', undefined, 'resume: blank type', 'type'),
  // GET /jobs paging and filters
  get('/jobs?page=2', 'offset paging (pages are walked by cursor now)', 'page'),
  get('/jobs?pageSize=20', 'offset page size (limit now)', 'pageSize'),
  get('/jobs?limit=ten', 'non-numeric limit', 'limit'),
  get('/jobs?limit=0', 'limit 0', 'limit'),
  get('/jobs?limit=1.5', 'fractional limit', 'limit'),
  get('/jobs?limit=1&limit=2', 'limit given twice', 'limit'),
  get('/jobs?limit=201', 'limit above the maximum', 'limit'),
  get('/jobs?cursor=abc!', 'cursor not base64url', 'cursor'),
  get('/jobs?cursor=eyJpZCI6ImFiYyJ9', 'cursor of a non-numeric id', 'cursor'),
  get('/jobs?status=done', 'unknown status', 'status'),
  get('/jobs?status=PENDING', 'status in capitals', 'status'),
  get('/jobs?type=', 'empty type', 'type'),
  get('/jobs?type=a%00b', 'type with NUL', 'type'),
  // GET /jobs/stale
  get('/jobs/stale?olderThanMinutes=ten', 'non-numeric olderThanMinutes', 'olderThanMinutes'),
  get('/jobs/stale?olderThanMinutes=-1', 'negative olderThanMinutes', 'olderThanMinutes'),
  get('/jobs/stats?maxAgeMs=-1', 'negative maxAgeMs', 'maxAgeMs'),
  get('/jobs/stats?maxAgeMs=soon', 'non-numeric maxAgeMs', 'maxAgeMs'),
];

/**
 * Every way a request to the example app can be wrong gets a 400 (or 404 for a job that does not
 * exist) whose JSON names the field to fix, in `field` and in the message; never a 500, and
 * nothing is enqueued. Every error answer has one shape, `{ statusCode, error, message }`, the
 * ones Express's body parser gives (too large, not JSON) included.
 */
describe('example app: bad requests', () => {
  let example: ExampleApp;
  const logs = new CapturingLogger();

  beforeAll(async () => {
    // Quick handlers: the jobs of the last test must not hold up close().
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 1 }, { logger: logs });
  });

  afterAll(async () => {
    await example?.close();
  });

  it.each(CASES.map((c) => [`${c.method.toUpperCase()} ${c.path}: ${c.what}`, c] as const))(
    '%s',
    async (_name, c) => {
      const call = example.http()[c.method](c.path);
      const response = await (c.body === undefined ? call : call.send(c.body as object));
      expect({ status: response.status, field: response.body.field }).toEqual({
        status: c.status,
        field: c.field,
      });
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toMatchObject({
        statusCode: c.status,
        error: expect.any(String),
        message: expect.any(String),
      });
      expect(response.body.message).toContain(c.field);
    },
  );

  it('answers a body that is not valid JSON with a 400 saying so', async () => {
    const response = await example
      .http()
      .post('/images')
      .set('content-type', 'application/json')
      .send('{"name": "cat.png"')
      .expect(400);
    // Express's JSON parser refuses it before any route runs: its message, no field.
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.stringMatching(/JSON/),
    });
  });

  it('answers a body over 100 KB with a 413 of the same shape, logged without a stack', async () => {
    const payload = `too-large-${'x'.repeat(101 * 1024)}`;
    const before = logs.lines.length;
    const response = await example
      .http()
      .post('/images')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ name: payload }))
      .expect(413);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: expect.any(String),
    });
    // A client's mistake: at most one line below error level, no stack, none of the body.
    const logged = logs.lines.slice(before);
    expect(logged.filter((line) => line.level === 'error' || line.level === 'fatal')).toEqual([]);
    expect(logged.length).toBeLessThanOrEqual(1);
    for (const line of logged) {
      expect(line.message).not.toMatch(/\n|\bat \S+ \(|too-large-/);
    }
  });

  it('logs none of the text of a request it refuses', async () => {
    const secret = 'request-secret-0c4e';
    const before = logs.lines.length;
    await example
      .http()
      .post('/images')
      .send({ name: `${secret}\ud800` })
      .expect(400);
    await example
      .http()
      .post('/images/bulk')
      .send({ count: 2, prefix: `${secret}\u0000` })
      .expect(400);
    await example.http().get(`/jobs?type=${secret}%00`).expect(400);
    const logged = logs.lines.slice(before);
    expect(logged.filter((line) => line.level === 'error' || line.level === 'fatal')).toEqual([]);
    expect(logged.filter((line) => line.message.includes(secret))).toEqual([]);
  });

  it('enqueued nothing for any of them', async () => {
    const { body } = await example.http().get('/jobs').expect(200);
    expect(body).toEqual({ items: [], nextCursor: null });
  });

  it('accepts the well-formed versions of the same requests', async () => {
    const upload = await example.http().post('/images').send({ name: 'cat.png' }).expect(201);
    await example.http().post('/images/bulk').send({ count: 2, prefix: 'p' }).expect(201);
    await example.http().post('/reports').send({ month: '2026-11' }).expect(201);
    await example.http().get(`/jobs/${upload.body.id}`).expect(200);
    await example.http().get('/jobs?status=pending&type=image.process&limit=200').expect(200);
    const page = await example.http().get('/jobs?limit=1').expect(200);
    await example.http().get('/jobs').query({ cursor: page.body.nextCursor }).expect(200);
    await example.http().get('/jobs/stale?olderThanMinutes=0').expect(200);
    const longestType = `/jobs/types/${'x'.repeat(255)}`;
    await example.http().post(`${longestType}/pause`).expect(201);
    await example.http().post(`${longestType}/resume`).expect(201);
  });
});

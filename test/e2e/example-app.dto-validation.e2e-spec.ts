import { JobStatus } from 'nest-pg-job-queue';
import { CapturingLogger } from '../support/capturing-logger';
import { ExampleApp, startExampleApp } from '../support/example-app';

const LIMITS = '(limit 1 to 200, default 50)';

/**
 * The example's request bodies and queries are DTO classes (src/…/dto) checked by class-validator
 * through one global ValidationPipe (RequestValidationPipe). Its 400s keep the example's one
 * shape, `{ statusCode, error, message, field }`, with a message (one string, not
 * class-validator's list) that names the field, says what it must be and shows what was sent.
 */
describe('example app: DTO validation keeps the error shape', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1 }, { logger: new CapturingLogger() });
  });

  afterAll(async () => {
    await example?.close();
  });

  const expect400 = async (
    call: () => PromiseLike<{ status: number; body: unknown }>,
    field: string,
    message: string,
  ) => {
    const response = await call();
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { statusCode: 400, error: 'Bad Request', message, field },
    });
  };

  it('refuses a missing body, and one that is not an object, naming body', async () => {
    await expect400(
      () => example.anonymous().post('/images'),
      'body',
      'body must be a JSON object (got undefined)',
    );
    await expect400(
      () => example.anonymous().post('/images').send(['cat.png']),
      'body',
      'body must be a JSON object (got ["cat.png"])',
    );
  });

  it('says what a text field must be, and shows what was sent', async () => {
    await expect400(
      () => example.anonymous().post('/images').send({ name: 42 }),
      'name',
      'name must be a non-empty string of at most 255 characters (got 42)',
    );
    await expect400(
      () => example.anonymous().post('/images').send({ name: 'cat\u0000.png' }),
      'name',
      'name must be text without NUL or unpaired UTF-16 surrogates (got "cat\\u0000.png")',
    );
    await expect400(
      () => example.anonymous().post('/images/bulk').send({ count: 5, prefix: null }),
      'prefix',
      'prefix must be a non-empty string of at most 255 characters (got null)',
    );
  });

  it('takes JSON numbers only as numbers, and months only as months', async () => {
    await expect400(
      () => example.anonymous().post('/images/bulk').send({ count: '5' }),
      'count',
      'count must be an integer from 1 to 10000 (got "5")',
    );
    await expect400(
      () => example.anonymous().post('/images/bulk').send({ count: 2.5 }),
      'count',
      'count must be an integer from 1 to 10000 (got 2.5)',
    );
    await expect400(
      () => example.anonymous().post('/reports').send({ month: '2026-13' }),
      'month',
      'month must be a month like "2026-11" (got "2026-13")',
    );
  });

  it('checks queries: offset paging first, then each filter', async () => {
    await expect400(
      () => example.http().get('/jobs?page=2&limit=ten'),
      'page',
      `page is no longer accepted by GET /jobs: pages are walked with cursor: send the previous answer's nextCursor ${LIMITS}`,
    );
    await expect400(
      () => example.http().get('/jobs?limit=ten'),
      'limit',
      'limit must be an integer from 1 to 200 (got "ten")',
    );
    await expect400(
      () => example.http().get('/jobs?limit=1&limit=2'),
      'limit',
      'limit must be an integer from 1 to 200 (got ["1","2"])',
    );
    await expect400(
      () => example.http().get('/jobs?status=done'),
      'status',
      `status must be one of ${Object.values(JobStatus).join(', ')} (got "done")`,
    );
    await expect400(
      () => example.http().get('/jobs?cursor=abc!'),
      'cursor',
      'cursor must be the nextCursor of an earlier GET /jobs answer (got "abc!")',
    );
    await expect400(
      () => example.http().get('/jobs/stale?olderThanMinutes=1.5'),
      'olderThanMinutes',
      'olderThanMinutes must be an integer from 0 to 525600 (got "1.5")',
    );
  });

  it('ignores fields a DTO does not declare, as before', async () => {
    const { body } = await example
      .anonymous()
      .post('/images')
      .send({ name: 'plain.png', source: 'bulk', priority: 1 })
      .expect(201);
    const { rows } = await example.sql.query(
      `SELECT data, priority FROM job_queue.jobs WHERE id = $1`,
      [body.id],
    );
    expect(rows).toEqual([{ data: { name: 'plain.png', source: 'upload' }, priority: 200 }]);
  });

  it('turns query digits into numbers for the route', async () => {
    const { body } = await example.http().get('/jobs?limit=1&status=').expect(200);
    expect(body.items).toHaveLength(1);
    await example.http().get('/jobs/stats?maxAgeMs=0').expect(200);
  });
});

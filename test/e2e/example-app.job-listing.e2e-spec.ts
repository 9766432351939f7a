import { getRepositoryToken } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Job, JobStatus } from 'nest-pg-job-queue';
import { ExampleApp, startExampleApp } from '../support/example-app';

/** `GET /jobs`'s answer (src/jobs/jobs.controller.ts), as JSON. */
interface ListPage {
  items: Array<{ id: string; type: string; status: string }>;
  nextCursor: string | null;
}

/** Types no handler of the example app takes: the worker leaves these rows as they are. */
const TYPES = ['listing.a', 'listing.b', 'listing.c'];
/** Statuses no worker or reaper changes (nothing held, nothing claimable). */
const STATUSES = [JobStatus.Pending, JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled];
const ROWS = 230;

interface Row {
  id: string;
  type: string;
  status: string;
}

const cursorOf = (payload: string) => Buffer.from(payload, 'utf8').toString('base64url');

/**
 * `GET /jobs` pages with a cursor (keyset on id, newest first): `{ items, nextCursor }`. Walking
 * the pages returns every job exactly once, in order, with or without filters, whatever is
 * enqueued meanwhile; a cursor not made by the app is a 400 naming `cursor`; the offset paging
 * the route had (`page`, `pageSize`) is refused with a 400 that says what to send instead.
 */
describe('example app: GET /jobs pages with a cursor', () => {
  let example: ExampleApp;
  let repository: Repository<Job>;
  /** Every row inserted, oldest first. */
  const rows: Row[] = [];

  /** Inserts jobs through the entity's repository (wherever its table lives). */
  const insert = async (count: number): Promise<Row[]> => {
    const base = rows.length;
    const values = Array.from({ length: count }, (_, k) => {
      const i = base + k;
      // Types and statuses in different cycles, so every pair occurs.
      return { jobType: TYPES[i % TYPES.length], status: STATUSES[i % STATUSES.length] };
    });
    const result = await repository.insert(values);
    const added = values.map((value, k) => ({
      id: String(result.identifiers[k].id),
      type: value.jobType,
      status: value.status,
    }));
    rows.push(...added);
    return added;
  };

  /** Every page of `query`, following nextCursor until it is null (bounded). */
  const walk = async (query: Record<string, string | number>): Promise<ListPage[]> => {
    const pages: ListPage[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 1_000; i++) {
      const response = await example
        .http()
        .get('/jobs')
        .query({ ...query, ...(cursor !== null && { cursor }) })
        .expect(200);
      const body = response.body as ListPage;
      expect(Object.keys(body).sort()).toEqual(['items', 'nextCursor']);
      pages.push(body);
      cursor = body.nextCursor;
      if (cursor === null) return pages;
    }
    throw new Error('more than 1,000 pages');
  };

  /** The rows `filter` lets through, newest first: what a walk must return. */
  const expected = (filter: (row: Row) => boolean) =>
    rows
      .filter(filter)
      .sort((a, b) => Number(BigInt(b.id) - BigInt(a.id)))
      .map(({ id, type, status }) => ({ id, type, status }));

  const listed = (pages: ListPage[]) =>
    pages.flatMap((page) => page.items.map(({ id, type, status }) => ({ id, type, status })));

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 1 });
    repository = example.app.get<Repository<Job>>(getRepositoryToken(Job));
    await insert(ROWS);
  });

  afterAll(async () => {
    await example?.close();
  });

  it('walks every job exactly once, newest first, in full pages but the last', async () => {
    const pages = await walk({ limit: 7 });
    expect(listed(pages)).toEqual(expected(() => true));
    const sizes = pages.map((page) => page.items.length);
    expect(sizes).toEqual([...Array(Math.floor(ROWS / 7)).fill(7), ROWS % 7]);
    // The cursor is opaque text, URL-safe as it is.
    for (const page of pages.slice(0, -1)) expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('ends on a full page when the rows divide evenly: no empty page after it', async () => {
    // 230 = 5 x 46.
    const pages = await walk({ limit: 46 });
    expect(pages.map((page) => page.items.length)).toEqual([46, 46, 46, 46, 46]);
    expect(pages[4].nextCursor).toBeNull();
  });

  it('answers 50 jobs a page by default, at most 200', async () => {
    const first = (await example.http().get('/jobs').expect(200)).body as ListPage;
    expect(first.items).toHaveLength(50);
    expect(first.items.map((job) => job.id)).toEqual(
      expected(() => true)
        .map((r) => r.id)
        .slice(0, 50),
    );
    const big = (await example.http().get('/jobs?limit=200').expect(200)).body as ListPage;
    expect(big.items).toHaveLength(200);
    expect(big.nextCursor).not.toBeNull();
  });

  it.each([
    ['status=failed', { status: 'failed' }, (row: Row) => row.status === 'failed'],
    ['type=listing.b', { type: 'listing.b' }, (row: Row) => row.type === 'listing.b'],
    [
      'status=pending&type=listing.c',
      { status: 'pending', type: 'listing.c' },
      (row: Row) => row.status === 'pending' && row.type === 'listing.c',
    ],
    ['type with no jobs', { type: 'listing.none' }, () => false],
  ] as const)('filters by %s across every page', async (_name, query, filter) => {
    const pages = await walk({ ...query, limit: 6 });
    const want = expected(filter);
    expect(listed(pages)).toEqual(want);
    if (want.length > 0)
      expect(want.length).toBeGreaterThan(6); // more than one page
    else expect(pages).toEqual([{ items: [], nextCursor: null }]);
  });

  it('neither repeats nor skips a job when jobs are enqueued during the walk', async () => {
    const before = expected(() => true);
    const pages: ListPage[] = [];
    let cursor: string | null = null;
    do {
      const response = await example
        .http()
        .get('/jobs')
        .query({ limit: 40, ...(cursor !== null && { cursor }) })
        .expect(200);
      const body = response.body as ListPage;
      pages.push(body);
      cursor = body.nextCursor;
      // Newer jobs land above the walk: an offset would have shifted every later page.
      await insert(9);
    } while (cursor !== null && pages.length < 100);
    expect(listed(pages)).toEqual(before);
  });

  it('answers a well-formed cursor below every job with an empty last page', async () => {
    const { body } = await example
      .http()
      .get('/jobs')
      .query({ cursor: cursorOf('{"id":"1"}') })
      .expect(200);
    expect(body).toEqual({ items: [], nextCursor: null });
  });

  const BAD_CURSORS: Array<[string, string]> = [
    ['not base64url', 'not a cursor!'],
    ['base64 with padding', Buffer.from('{"id":"5"}').toString('base64')],
    ['not JSON', cursorOf('id=5')],
    ['JSON but not an object', cursorOf('["5"]')],
    ['null', cursorOf('null')],
    ['id a number', cursorOf('{"id":5}')],
    ['id not digits', cursorOf('{"id":"abc"}')],
    ['id 0', cursorOf('{"id":"0"}')],
    ['id negative', cursorOf('{"id":"-5"}')],
    ['id with a leading zero', cursorOf('{"id":"05"}')],
    ['id beyond bigint', cursorOf('{"id":"9223372036854775808"}')],
    ['an extra key', cursorOf('{"id":"5","offset":10}')],
    ['far too long', 'A'.repeat(10_000)],
  ];

  it.each(BAD_CURSORS)('refuses a cursor that is %s with a 400 naming cursor', async (_n, c) => {
    const response = await example.http().get('/jobs').query({ cursor: c }).expect(400);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.stringContaining('cursor'),
      field: 'cursor',
    });
    expect(response.body.message.length).toBeLessThan(300);
  });

  it('refuses cursor given twice', async () => {
    const cursor = cursorOf('{"id":"50"}');
    const response = await example.http().get(`/jobs?cursor=${cursor}&cursor=${cursor}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, field: 'cursor' });
  });

  it.each([
    ['/jobs?page=2', 'page', /cursor/],
    ['/jobs?page=1&pageSize=20', 'page', /cursor/],
    ['/jobs?pageSize=20', 'pageSize', /limit/],
  ])(
    'refuses the old offset paging (%s) with a 400 saying what to send',
    async (path, field, says) => {
      const { body } = await example.http().get(path).expect(400);
      expect(body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.stringMatching(says),
        field,
      });
    },
  );

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['status=done', 'status'],
  ])('refuses %s with a 400 naming %s', async (query, field) => {
    const { body } = await example.http().get(`/jobs?${query}`).expect(400);
    expect(body).toMatchObject({ statusCode: 400, field });
  });

  it('still wants the admin token, cursor or not', async () => {
    const cursor = cursorOf('{"id":"50"}');
    const { body } = await example.anonymous().get('/jobs').query({ cursor }).expect(401);
    expect(body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });
});

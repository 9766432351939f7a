import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

type Method = 'get' | 'post';

interface Route {
  method: Method;
  /** With `:id` for the job the test prepares, `:type` for its type. */
  path: string;
  /** What the route answers when it lets the request through. */
  ok: 200 | 201;
  /** Part of its answer then. */
  answer?: object;
}

/**
 * Every management route (src/jobs/jobs.controller.ts, src/metrics), in an order that works on
 * one job.
 */
const MANAGEMENT: Route[] = [
  { method: 'get', path: '/jobs', ok: 200 },
  { method: 'get', path: '/jobs/stats', ok: 200 },
  { method: 'get', path: '/jobs/stale', ok: 200 },
  { method: 'get', path: '/jobs/:id', ok: 200 },
  { method: 'post', path: '/jobs/:id/cancel', ok: 201, answer: { status: 'cancelled' } },
  // Followed once the job has ended (cancelled just above): its stream ends at once.
  { method: 'get', path: '/jobs/:id/events', ok: 200 },
  { method: 'post', path: '/jobs/:id/retry', ok: 201, answer: { status: 'pending' } },
  { method: 'post', path: '/jobs/types/:type/pause', ok: 201, answer: { paused: true } },
  { method: 'post', path: '/jobs/types/:type/resume', ok: 201, answer: { paused: false } },
  { method: 'get', path: '/metrics', ok: 200 },
  { method: 'get', path: '/reports/monthly/:flowId', ok: 200 },
  { method: 'post', path: '/reports/monthly/:flowId/cancel', ok: 201 },
];

/** The routes a user of the demo calls: they enqueue, and stay open. */
const OPEN: Array<Route & { body: object }> = [
  { method: 'post', path: '/images', ok: 201, body: { name: 'open.png' } },
  { method: 'post', path: '/images/bulk', ok: 201, body: { count: 2, prefix: 'open' } },
  {
    method: 'post',
    path: '/images/audited',
    ok: 201,
    body: { name: 'open-audited.png', uploadedBy: 'anyone' },
  },
  { method: 'post', path: '/reports', ok: 201, body: { month: '2026-09' } },
  { method: 'post', path: '/reports/monthly', ok: 201, body: { month: '2026-09' } },
  {
    method: 'post',
    path: '/emails',
    ok: 201,
    body: { tenantId: 'open', to: 'anyone@open.test', subject: 'Hello' },
  },
];

/**
 * The dashboard (src/dashboard/, the library's JobQueueDashboardModule behind AdminTokenGuard):
 * with the token, pages answer and actions want the page's CSRF token as well.
 */
const DASHBOARD: Route[] = [
  { method: 'get', path: '/queue', ok: 200 },
  { method: 'get', path: '/queue/assets/dashboard.css', ok: 200 },
  { method: 'get', path: '/queue/assets/dashboard.js', ok: 200 },
  { method: 'get', path: '/queue/jobs', ok: 200 },
  { method: 'get', path: '/queue/jobs/:id', ok: 200 },
  { method: 'get', path: '/queue/jobs/:id/stream', ok: 200 },
  { method: 'get', path: '/queue/flows/:flowId', ok: 200 },
  { method: 'post', path: '/queue/flows/:flowId/cancel', ok: 201 },
  { method: 'post', path: '/queue/jobs/:id/cancel', ok: 201 },
  { method: 'post', path: '/queue/jobs/:id/retry', ok: 201 },
  { method: 'post', path: '/queue/schedules/:name/run', ok: 201 },
  { method: 'post', path: '/queue/types/:type/pause', ok: 201 },
  { method: 'post', path: '/queue/types/:type/resume', ok: 201 },
];

/** The dashboard's sign-in form: open, as a login form is (the token is what it checks). */
const SIGN_IN: Route[] = [
  { method: 'get', path: '/sign-in', ok: 200 },
  { method: 'post', path: '/sign-in', ok: 201 },
  { method: 'post', path: '/sign-out', ok: 201 },
];

/** The readiness probe: open, as a load balancer calls it. */
const PROBES: Route[] = [{ method: 'get', path: '/health', ok: 200 }];

const name = (route: Pick<Route, 'method' | 'path'>) =>
  `${route.method.toUpperCase()} ${route.path}`;

/** Every route of the app, read from its controllers' metadata, as `GET /jobs/:id`. */
function appRoutes(example: ExampleApp): string[] {
  const routes: string[] = [];
  for (const module of example.app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, metatype) ?? '');
      const prototype = (metatype as { prototype: Record<string, unknown> }).prototype;
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[key];
        if (key === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const path = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '/');
        const parts = [base, path].map((part) => part.replace(/^\/|\/$/g, '')).filter(Boolean);
        const full = `/${parts.join('/')}`;
        routes.push(`${RequestMethod[method]} ${full.replace(/\/+$/, '') || '/'}`);
      }
    }
  }
  return routes.sort();
}

/**
 * The management routes (/jobs…) want `Authorization: Bearer <EXAMPLE_ADMIN_TOKEN>`: without
 * it, or with another token, they answer 401 in the example's one error shape and do nothing.
 * The routes that enqueue stay open.
 */
describe('example app: the admin token', () => {
  let example: ExampleApp;
  /** A job no worker takes (it runs in a day): cancelled, then retried, by the admin. */
  let jobId: string;
  /** Its row as inserted: a refused request must leave it so. */
  let inserted: unknown;
  /** A monthly report's flow, for the routes of a flow. */
  let flowId: string;

  const row = async () =>
    (await example.sql.query('SELECT * FROM job_queue.jobs WHERE id = $1', [jobId]))
      .rows[0] as unknown;

  const call = (agent: ReturnType<ExampleApp['http']>, route: Route) =>
    agent[route.method](
      route.path
        .replace(':id', jobId)
        .replace(':type', 'image.process')
        .replace(':name', 'report.daily')
        .replace(':flowId', flowId),
    );

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 1 });
    const { rows } = await example.sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, priority, run_at)
       VALUES ('image.process', '{"name": "later.png", "source": "upload"}', 200,
               now() + interval '1 day')
       RETURNING id::text`,
    );
    jobId = rows[0].id;
    inserted = await row();
    const monthly = await example.anonymous().post('/reports/monthly').send({ month: '2026-08' });
    flowId = (monthly.body as { flowId: string }).flowId;
  });

  afterAll(async () => {
    await example?.close();
  });

  it('knows every route of the app: each is a management route or an open one', () => {
    expect(appRoutes(example)).toEqual(
      [...MANAGEMENT, ...DASHBOARD, ...SIGN_IN, ...OPEN, ...PROBES]
        .map((route) => name(route))
        .sort(),
    );
  });

  it('GET /health answers without a token: the queue is healthy', async () => {
    const response = await example.anonymous().get('/health');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      info: { jobQueue: { status: 'up', database: 'up', worker: 'running' } },
    });
  });

  const expectRefused = (response: {
    status: number;
    headers: Record<string, string>;
    body: unknown;
  }) => {
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.body).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.any(String),
    });
  };

  it.each(MANAGEMENT.map((route) => [name(route), route] as const))(
    '%s without a token: 401',
    async (_name, route) => {
      expectRefused(await call(example.anonymous(), route));
    },
  );

  const WRONG: Array<[what: string, header: string]> = [
    ['another token', 'Bearer not-the-admin-token'],
    ['the token with one character more', 'Bearer <token>x'],
    ['the token but its last character', 'Bearer <token-1>'],
    ['the token under another scheme', 'Basic <token>'],
    ['the token without a scheme', '<token>'],
    ['an empty bearer token', 'Bearer '],
  ];

  it.each(
    MANAGEMENT.flatMap((route) =>
      WRONG.map(([what, header]) => [name(route), what, route, header] as const),
    ),
  )('%s with %s: 401', async (_name, _what, route, header) => {
    const value = header
      .replace('<token>', example.adminToken)
      .replace('<token-1>', example.adminToken.slice(0, -1));
    expectRefused(await call(example.anonymous().set('authorization', value), route));
  });

  it('did nothing for any refused request: the job is as inserted, no type paused', async () => {
    expect(await row()).toEqual(inserted);
    const { rows } = await example.sql.query(
      'SELECT job_type FROM job_queue.job_types WHERE paused_at IS NOT NULL',
    );
    expect(rows).toEqual([]);
  });

  it.each(MANAGEMENT.map((route) => [name(route), route] as const))(
    '%s with the admin token: answers',
    async (_name, route) => {
      const response = await call(example.http(), route);
      expect({ status: response.status, body: response.body }).toEqual({
        status: route.ok,
        body: route.answer ? expect.objectContaining(route.answer) : expect.anything(),
      });
    },
  );

  // The retry above made the job due, and the app's worker runs it: it must have finished before
  // the dashboard's actions are checked to leave it as it was.
  it("the job the admin retried runs to completion on the app's worker", async () => {
    const finished = await waitFor(
      async () => {
        const job = (await row()) as { status: string };
        return job.status === 'completed' ? job : undefined;
      },
      { description: `job ${jobId} to complete` },
    );
    expect(finished).toMatchObject({ status: 'completed', attempts: 1 });
  });

  it('accepts the scheme in any case, as HTTP has it', async () => {
    await example
      .anonymous()
      .get('/jobs/stats')
      .set('authorization', `bearer ${example.adminToken}`)
      .expect(200);
  });

  it.each(DASHBOARD.map((route) => [name(route), route] as const))(
    '%s without the token or a session: 401, and with a forged session',
    async (_name, route) => {
      expect((await call(example.anonymous(), route)).status).toBe(401);
      const forged = `example_admin_session=v1.${Date.now() + 60_000}.${'A'.repeat(43)}`;
      expect((await call(example.anonymous().set('cookie', forged), route)).status).toBe(401);
    },
  );

  it.each(DASHBOARD.map((route) => [name(route), route] as const))(
    '%s with the token: a page, or for an action a 403 without the CSRF token, changing nothing',
    async (_name, route) => {
      const before = await row();
      const response = await call(example.http(), route);
      expect(response.status).toBe(route.method === 'get' ? route.ok : 403);
      expect(await row()).toEqual(before);
    },
  );

  it('POST /sign-in with the token gives a session the dashboard accepts', async () => {
    const wrong = await example.anonymous().post('/sign-in').type('form').send({ token: 'x' });
    expect({ status: wrong.status, cookie: wrong.headers['set-cookie'] }).toEqual({
      status: 401,
      cookie: undefined,
    });
    const right = await example
      .anonymous()
      .post('/sign-in')
      .type('form')
      .send({ token: example.adminToken });
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe('/queue');
    const [cookie] = right.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(/; Path=\/queue; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    const session = cookie.split(';')[0];
    await example.anonymous().get('/queue').set('cookie', session).expect(200);
    // From another site's page: refused before the token is read.
    await example
      .anonymous()
      .post('/sign-in')
      .set('origin', 'https://elsewhere.test')
      .type('form')
      .send({ token: example.adminToken })
      .expect(401);
  });

  it.each(OPEN.map((route) => [name(route), route] as const))(
    '%s needs no token',
    async (_name, route) => {
      await example.anonymous()[route.method](route.path).send(route.body).expect(route.ok);
    },
  );
});

describe('example app: with no admin token configured', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp({ EXAMPLE_ADMIN_TOKEN: '' });
  });

  afterAll(async () => {
    await example?.close();
  });

  it.each([...MANAGEMENT, ...DASHBOARD].map((route) => [name(route), route] as const))(
    '%s is refused, whatever the token',
    async (_name, route) => {
      const path = route.path
        .replace(':id', '1')
        .replace(':type', 'image.process')
        .replace(':name', 'report.daily')
        .replace(':flowId', '00000000-0000-4000-8000-000000000000');
      for (const header of [undefined, 'Bearer ', 'Bearer undefined', 'Bearer null']) {
        const request = example.anonymous()[route.method](path);
        const response = await (header === undefined
          ? request
          : request.set('authorization', header));
        expect({ header, status: response.status }).toEqual({ header, status: 401 });
      }
    },
  );
});

import request from 'supertest';
import { JobStatus } from 'nest-pg-job-queue';
import {
  ADMIN_HEADER,
  ADMIN_VALUE,
  DashboardApp,
  Platform,
  startDashboardApp,
} from './dashboard-app';
import { SseClient } from './sse-client';
import { waitFor } from './wait-for';

const SCRIPT = '<script>alert(1)</script>';
const IMG = '"><img src=x onerror=alert(1)>';
const SCRIPT_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';
const IMG_ESCAPED = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A page as a browser would get it: its HTML, and the CSRF cookie and field it carries. */
interface Page {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  cookie: string;
  csrf: string;
}

/** No hostile markup unescaped: no script but the dashboard's own, no image at all. */
function expectNoRawHostile(text: string): void {
  expect(text).not.toContain('<script>alert');
  expect(text).not.toContain('<img src=x');
  expect(text).not.toMatch(/<img\b/i);
}

/**
 * The dashboard over real HTTP on one platform, on a database of its own: who gets in, what is
 * escaped, the headers, CSRF, actions and their refusals, the live stream, and paging.
 */
export function dashboardSuite(platform: Platform): void {
  let dash: DashboardApp;
  const admin = { [ADMIN_HEADER]: ADMIN_VALUE };

  beforeAll(async () => {
    dash = await startDashboardApp(platform);
  });

  afterAll(async () => {
    await dash?.close();
  });

  const http = () => request(dash.app.getHttpServer());

  /** GETs a page as the admin, with the CSRF cookie a browser would have kept (if any). */
  const get = async (path: string, cookie?: string): Promise<Page> => {
    let call = http().get(path).set(admin);
    if (cookie) call = call.set('Cookie', cookie);
    const res = await call;
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    const fresh = setCookie.find((line) => line.startsWith('jq_dashboard_csrf='));
    return {
      status: res.status,
      text: res.text,
      headers: res.headers,
      cookie: fresh ? fresh.split(';')[0] : (cookie ?? ''),
      csrf: /name="_csrf" value="([^"]+)"/.exec(res.text)?.[1] ?? '',
    };
  };

  /** The overview once its stats snapshot (refreshed in the background) shows `text`. */
  const overviewShowing = (text: string): Promise<Page> =>
    waitFor(
      async () => {
        const page = await get('/queue');
        return page.text.includes(text) ? page : undefined;
      },
      { description: `the overview to show ${text}` },
    );

  const post = (path: string, page: Page, form: Record<string, string> = { _csrf: page.csrf }) =>
    http().post(path).set(admin).set('Cookie', page.cookie).type('form').send(form);

  const pausedInDb = async (type: string): Promise<boolean> =>
    (
      await dash.sql.query<{ paused: boolean }>(
        'SELECT paused_at IS NOT NULL AS paused FROM job_queue.job_types WHERE job_type = $1',
        [type],
      )
    ).rows[0]?.paused ?? false;

  const insertJob = async (status: string, extra: { type?: string; error?: string } = {}) => {
    const { rows } = await dash.sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, status, attempts, max_attempts, last_error,
                                   completed_at, result)
       VALUES ($1, $2, $3, 1, 1, $4,
               CASE WHEN $3 IN ('completed', 'failed') THEN now() END,
               CASE WHEN $3 = 'completed' THEN '{"ok": true}'::jsonb END)
       RETURNING id::text`,
      [extra.type ?? 'dashboard.other', { name: 'row' }, status, extra.error ?? null],
    );
    return rows[0].id;
  };

  /** A flow of three steps of a type no worker here handles, its first step completed. */
  const flowWithFirstStepDone = async (type: string) => {
    const clean = `clean ${SCRIPT}`;
    const load = `load ${IMG}`;
    const { flowId, steps } = await dash.queue.flow({
      steps: [
        { name: 'extract', type, data: {} },
        { name: clean, type, data: {}, dependsOn: ['extract'] },
        { name: load, type, data: {}, dependsOn: [clean] },
      ],
    });
    await dash.sql.query(
      `UPDATE job_queue.jobs SET status = 'completed', completed_at = now(), attempts = 1
       WHERE id = $1`,
      [steps.extract.id],
    );
    return { flowId, ids: [steps.extract.id, steps[clean].id, steps[load].id] };
  };

  /** The rows of a page's table `id`: each job's id and status, in the page's order. */
  const tableRows = (text: string, id: string): string[][] => {
    const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(text)?.[1] ?? '';
    return [...table.matchAll(/<tr data-job-id="(\d+)" class="status-(\w+)">/g)].map((m) => [
      m[1],
      m[2],
    ]);
  };

  const statusesInDb = async (ids: string[]): Promise<string[]> =>
    (
      await dash.sql.query<{ status: string }>(
        'SELECT status FROM job_queue.jobs WHERE id = ANY($1::bigint[]) ORDER BY id',
        [ids],
      )
    ).rows.map((row) => row.status);

  describe('access', () => {
    it('refuses every request of a dashboard without a guard, with a page that says why', async () => {
      const refused = await get('/refused');
      expect(refused.status).toBe(403);
      expect(refused.headers['content-security-policy']).toBe(CSP);
      expect(refused.text).toMatch(/<p id="error"[^>]*>The job queue dashboard is refusing/);
      expect(refused.text).toContain('register it with a guard');
      for (const path of ['/refused/jobs', '/refused/jobs/1', '/refused/assets/dashboard.js']) {
        expect({ path, status: (await http().get(path)).status }).toEqual({ path, status: 403 });
      }
      expect((await http().post('/refused/types/x/pause').type('form').send({})).status).toBe(403);
      const warnings = dash.logger.lines.filter(
        (line) => line.level === 'warn' && line.message.includes('at /refused has no guard'),
      );
      expect(warnings).toHaveLength(1);
    });

    it("refuses every request when the app's guard says no", async () => {
      for (const path of ['/denied', '/denied/jobs', '/denied/assets/dashboard.css']) {
        const res = await http().get(path).set(admin);
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expect(res.headers['content-security-policy']).toBe(CSP);
      }
      const job = await dash.queue.enqueue('dashboard.other', {});
      expect((await http().get(`/denied/jobs/${job.id}/stream`)).status).toBe(403);
      expect((await http().post('/denied/types/dashboard.other/pause').send({})).status).toBe(403);
      expect(await pausedInDb('dashboard.other')).toBe(false);
      // The guard instance of /queue: only with its header.
      expect((await http().get('/queue')).status).toBe(403);
      expect((await http().get('/queue').set(admin)).status).toBe(200);
    });

    it('serves anyone with unsafeAllowAnonymous, and warns at boot', async () => {
      const res = await http().get('/open');
      expect(res.status).toBe(200);
      expect(res.text).toContain('<h1>Overview</h1>');
      expect(dash.logger.matching(/at \/open is open to anyone/)).toHaveLength(1);
    });

    it('registerAsync: the factory gives a guard class whose dependency comes from imports', async () => {
      expect((await http().get('/async/queue')).status).toBe(403);
      const res = await http().get('/async/queue').set(admin);
      expect(res.status).toBe(200);
      expect(res.text).toContain('<title>Overview · Async yes</title>');
      expect(res.text).toContain('href="/async/queue/assets/dashboard.css"');
    });
  });

  describe('pages', () => {
    it('carries the policy and the other headers, and serves its assets with their types', async () => {
      const overview = await get('/queue');
      expect(overview.status).toBe(200);
      expect(overview.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
      expect(overview.headers['content-security-policy']).toBe(CSP);
      expect(overview.headers['x-content-type-options']).toBe('nosniff');
      expect(overview.headers['referrer-policy']).toBe('same-origin');
      expect(overview.headers['cache-control']).toBe('no-store');
      expect(overview.text).not.toMatch(/<script>|\sstyle=|\son[a-z]+=/);
      expect(overview.text).toMatch(/<svg\s+id="throughput"/);
      const css = await http().get('/queue/assets/dashboard.css').set(admin);
      expect(css.headers['content-type']).toMatch(/^text\/css/);
      expect(css.headers['content-security-policy']).toBe(CSP);
      const js = await http().get('/queue/assets/dashboard.js').set(admin);
      expect(js.headers['content-type']).toMatch(/^text\/javascript/);
      expect(js.text).toContain('new EventSource');
    });

    it('shows hostile type names, payloads, results, errors, keys, log lines and schedules as text', async () => {
      const hostileType = `${SCRIPT}${IMG}`;
      const job = await dash.queue.enqueue(
        hostileType,
        { name: SCRIPT, alt: IMG },
        { uniqueKey: `key-${IMG}` },
      );
      await dash.sql.query(
        `UPDATE job_queue.jobs SET last_error = $2, result = $3, current_stage = $4 WHERE id = $1`,
        [job.id, `Error: ${SCRIPT}`, JSON.stringify({ echo: IMG }), SCRIPT],
      );
      await dash.sql.query(
        `INSERT INTO job_queue.job_events (job_id, run_token, attempt, at, kind, message, data)
         VALUES ($1, 0, 0, now(), 'log', $2, $3)`,
        [job.id, `line ${SCRIPT}`, JSON.stringify({ alt: IMG })],
      );
      await dash.queue.schedule(`nightly ${IMG}`, '0 3 * * *', hostileType, { x: SCRIPT });

      const overview = await overviewShowing(`data-type="${SCRIPT_ESCAPED}${IMG_ESCAPED}"`);
      expectNoRawHostile(overview.text);
      expect(overview.text).toContain(`data-schedule="nightly ${IMG_ESCAPED}"`);

      const listing = await get(`/queue/jobs?type=${encodeURIComponent(hostileType)}`);
      expect(listing.status).toBe(200);
      expectNoRawHostile(listing.text);
      expect(listing.text).toContain(`<tr data-job-id="${job.id}"`);
      expect(listing.text).toContain(`key-${IMG_ESCAPED}`);
      // The filter form shows what was asked, escaped in its attribute.
      expect(listing.text).toContain(`name="type" value="${SCRIPT_ESCAPED}${IMG_ESCAPED}"`);

      const page = await get(`/queue/jobs/${job.id}`);
      expect(page.status).toBe(200);
      expectNoRawHostile(page.text);
      expect(page.text).toContain(`&quot;name&quot;: &quot;${SCRIPT_ESCAPED}&quot;`);
      expect(page.text).toContain(`Error: ${SCRIPT_ESCAPED}`);
      expect(page.text).toContain(`line ${SCRIPT_ESCAPED}`);
      expect(page.text).toMatch(/<pre id="job-result">\{\n {2}&quot;echo&quot;: /);
      expect(page.text).toContain(`<dd id="job-stage">${SCRIPT_ESCAPED}</dd>`);

      // Bad input echoed by the queue's own message is escaped as well.
      const bad = await get(`/queue/jobs?status=${encodeURIComponent(SCRIPT)}`);
      expect(bad.status).toBe(400);
      expectNoRawHostile(bad.text);
      expect(bad.text).toMatch(/<p id="error"[^>]*>.*status/);
    });

    it('shows a blocked job: counted in the overview, found by the status filter, its flow, step and dependencies on its page', async () => {
      const job = await dash.queue.enqueue('dashboard.flow', {});
      const flowId = '0b7c1e52-4f4e-4c1f-9d0a-3f6a2b8c9d10';
      await dash.sql.query(
        `UPDATE job_queue.jobs SET status = 'blocked', unfinished_dependencies = 1,
                                   on_dependency_failure = 'fail', flow_id = $2, step_name = $3
         WHERE id = $1`,
        [job.id, flowId, `publish ${SCRIPT}`],
      );

      // The stats snapshot may first count the job as the enqueue left it (pending): wait for
      // one taken after the update.
      const overview = await overviewShowing(
        '<a href="/queue/jobs?type=dashboard.flow&amp;status=blocked">1</a>',
      );
      expect(overview.text).toMatch(
        /<th scope="col"><a href="\/queue\/jobs\?status=blocked">blocked<\/a>/,
      );
      expect(overview.text).toMatch(
        /<tr data-type="dashboard.flow"[\s\S]*?data-status="blocked">\s*<a href="\/queue\/jobs\?type=dashboard.flow&amp;status=blocked">1<\/a>/,
      );

      const listing = await get('/queue/jobs?status=blocked');
      expect(listing.status).toBe(200);
      expect(listing.text).toMatch(/<option value="blocked"\s+selected>/);
      const listed = [...listing.text.matchAll(/<tr data-job-id="(\d+)" class="status-(\w+)">/g)];
      expect(listed.map((m) => [m[1], m[2]])).toEqual([[job.id, 'blocked']]);

      const page = await get(`/queue/jobs/${job.id}`);
      expect(page.text).toContain('<span id="job-status" class="status">blocked</span>');
      expect(page.text).toContain(
        `<dd id="job-flow"><a href="/queue/flows/${flowId}">${flowId}</a></dd>`,
      );
      expect(page.text).toContain(`<dd id="job-step">publish ${SCRIPT_ESCAPED}</dd>`);
      expect(page.text).toContain('<dd id="job-dependencies">1 unfinished</dd>');
      expectNoRawHostile(page.text);
      // Unfinished: the page follows it, and the stream carries the count the page shows.
      expect(page.text).toContain('data-stream=');
      const client = new SseClient(`${dash.url}/queue/jobs/${job.id}/stream`, admin);
      try {
        const states = () =>
          client.of('job').map((m) => m.data as { status: string; unfinishedDependencies: number });
        await waitFor(() => states().length > 0, { description: 'the first state streamed' });
        expect(states()[0]).toMatchObject({ status: 'blocked', unfinishedDependencies: 1 });
        await dash.sql.query(
          `UPDATE job_queue.jobs SET status = 'pending', unfinished_dependencies = 0 WHERE id = $1`,
          [job.id],
        );
        await waitFor(() => states().some((state) => state.status === 'pending'), {
          description: 'its move to pending streamed',
        });
        expect(states().at(-1)).toMatchObject({ status: 'pending', unfinishedDependencies: 0 });
      } finally {
        client.disconnect();
      }

      // A job without dependencies has none of those rows.
      const plain = await dash.queue.enqueue('dashboard.flow', {});
      const plainPage = await get(`/queue/jobs/${plain.id}`);
      expect(plainPage.text).not.toMatch(/id="job-(flow|step|dependencies)"/);
    });

    it("shows a flow: its jobs in order with step, status and unfinished dependencies, hostile step names as text; a job's page links to it and lists its edges", async () => {
      const { flowId, ids } = await flowWithFirstStepDone('dashboard.flow-page');
      const page = await get(`/queue/flows/${flowId}`);
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toBe(CSP);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.text).toContain(`<h1>Flow ${flowId}</h1>`);
      expect(tableRows(page.text, 'flow-jobs')).toEqual([
        [ids[0], 'completed'],
        [ids[1], 'pending'],
        [ids[2], 'blocked'],
      ]);
      expectNoRawHostile(page.text);
      expect(page.text).toContain(`<td class="step">clean ${SCRIPT_ESCAPED}</td>`);
      expect(page.text).toContain(`<td class="step">load ${IMG_ESCAPED}</td>`);
      expect(page.text).toContain(`<a href="/queue/jobs/${ids[2]}">${ids[2]}</a>`);
      // Unfinished dependencies: none for the first step, 0 once met, 1 while waiting.
      const counts = [...page.text.matchAll(/<td class="count">([^<]*)<\/td>/g)].map((m) => m[1]);
      expect(counts).toEqual(['', '0', '1']);
      expect(page.text).toMatch(/<time datetime="[^"]+">/); // the first step's finish
      expect(page.text).toContain('<p id="flow-summary">3 job(s), 2 unfinished.</p>');
      expect(page.text).toContain(`action="/queue/flows/${flowId}/cancel"`);
      expect(page.text).toContain('data-action="cancel-flow"');

      // An upper-case id is the same flow, shown by its canonical id.
      const upper = await get(`/queue/flows/${flowId.toUpperCase()}`);
      expect(upper.status).toBe(200);
      expect(upper.text).toContain(`<h1>Flow ${flowId}</h1>`);

      // The middle job's page: its flow linked, what it waits for and what waits for it.
      const middle = await get(`/queue/jobs/${ids[1]}`);
      expect(middle.text).toContain(`<dd id="job-flow"><a href="/queue/flows/${flowId}">`);
      expect(tableRows(middle.text, 'job-dependency-list')).toEqual([[ids[0], 'completed']]);
      expect(tableRows(middle.text, 'job-dependant-list')).toEqual([[ids[2], 'blocked']]);
      expect(middle.text).toContain(`<td class="step">load ${IMG_ESCAPED}</td>`);
      expectNoRawHostile(middle.text);
      const first = await get(`/queue/jobs/${ids[0]}`);
      expect(first.text).not.toContain('id="job-dependency-list"');
      expect(tableRows(first.text, 'job-dependant-list')).toEqual([[ids[1], 'pending']]);
    });

    it('answers an unknown flow with a 404 page, and a bad flow id with a 400', async () => {
      const unknown = '7d1f0c7e-2b4a-4c39-8f0e-5a6b7c8d9e0f';
      const missing = await get(`/queue/flows/${unknown}`);
      expect(missing.status).toBe(404);
      expect(missing.headers['content-security-policy']).toBe(CSP);
      expect(missing.text).toMatch(
        new RegExp(`<p id="error"[^>]*>No flow with id &#39;${unknown}`),
      );
      const bad = await get(`/queue/flows/${encodeURIComponent(SCRIPT)}`);
      expect(bad.status).toBe(400);
      expect(bad.headers['content-security-policy']).toBe(CSP);
      expect(bad.text).toMatch(/<p id="error"[^>]*>.*flowId/);
      expectNoRawHostile(bad.text);
    });

    it('answers an unknown job with a 404 page, and a bad id with a 400', async () => {
      const missing = await get('/queue/jobs/987654321');
      expect(missing.status).toBe(404);
      expect(missing.text).toMatch(/<p id="error"[^>]*>.*987654321/);
      expect(missing.headers['content-security-policy']).toBe(CSP);
      expect((await get('/queue/jobs/not-a-number')).status).toBe(400);
      expect((await http().get('/queue/jobs/987654321/stream').set(admin)).status).toBe(404);
    });

    it('pages the listing through rel=next, newest first, each job once', async () => {
      await dash.queue.enqueueMany(
        Array.from({ length: 120 }, (_, i) => ({ type: 'dashboard.paged', data: { i } })),
      );
      const seen: string[] = [];
      let path: string | undefined = '/queue/jobs?type=dashboard.paged';
      let pages = 0;
      while (path) {
        const page = await get(path);
        expect(page.status).toBe(200);
        const ids = [...page.text.matchAll(/<tr data-job-id="(\d+)"/g)].map((m) => m[1]);
        seen.push(...ids);
        pages += 1;
        const next = /<a rel="next" href="([^"]+)"/.exec(page.text)?.[1];
        path = next?.replace(/&amp;/g, '&');
        if (path) expect(path).toContain('type=dashboard.paged');
      }
      expect(pages).toBe(3);
      expect(seen).toHaveLength(120);
      expect(new Set(seen).size).toBe(120);
      expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => b - a));
    });
  });

  describe('actions', () => {
    it('refuses a POST without the token, with a wrong one, or from another origin: 403, nothing changed', async () => {
      const page = await get('/queue');
      const path = '/queue/types/dashboard.guarded/pause';
      const noToken = await post(path, page, {});
      expect(noToken.status).toBe(403);
      expect(noToken.text).toMatch(/<p id="error"[^>]*>Refused: the form had no valid CSRF token/);
      expect((await post(path, page, { _csrf: 'x'.repeat(43) })).status).toBe(403);
      const noCookie = await http().post(path).set(admin).type('form').send({ _csrf: page.csrf });
      expect(noCookie.status).toBe(403);
      const crossSite = await post(path, page).set('Origin', 'https://evil.example');
      expect(crossSite.status).toBe(403);
      expect(await pausedInDb('dashboard.guarded')).toBe(false);
    });

    it('behind a proxy that rewrites Host, takes a POST whose Origin is the forwarded host, and refuses another', async () => {
      await dash.queue.enqueue('dashboard.proxied', {});
      const page = await overviewShowing('data-type="dashboard.proxied"');
      const proxied = (path: string, forwarded: [string, string]) =>
        post(path, page)
          .set('Host', 'upstream.internal:3000')
          .set('Origin', 'https://jobs.example.com')
          .set(...forwarded);
      const pause = '/queue/types/dashboard.proxied/pause';
      // Someone else's host forwarded: still another origin, nothing paused.
      expect((await proxied(pause, ['X-Forwarded-Host', 'evil.example'])).status).toBe(403);
      expect(await pausedInDb('dashboard.proxied')).toBe(false);
      const paused = await proxied(pause, ['X-Forwarded-Host', 'jobs.example.com, upstream']);
      expect(paused.status).toBe(303);
      expect(await pausedInDb('dashboard.proxied')).toBe(true);
      const resumed = await proxied('/queue/types/dashboard.proxied/resume', [
        'Forwarded',
        'for=192.0.2.1;host="jobs.example.com";proto=https',
      ]);
      expect(resumed.status).toBe(303);
      expect(await pausedInDb('dashboard.proxied')).toBe(false);
    });

    it('pauses and resumes a type with the page token, and says so', async () => {
      await dash.queue.enqueue('dashboard.pausable', {});
      const page = await overviewShowing('data-type="dashboard.pausable"');
      expect(page.text).toMatch(
        /<tr data-type="dashboard.pausable"[\s\S]*?data-action="pause"[\s\S]*?<\/tr>/,
      );
      const paused = await post('/queue/types/dashboard.pausable/pause', page);
      expect(paused.status).toBe(303);
      expect(paused.headers.location).toBe('/queue?notice=paused');
      expect(await pausedInDb('dashboard.pausable')).toBe(true);
      const after = await get(paused.headers.location, page.cookie);
      expect(after.text).toMatch(/<p id="notice"[^>]*>Paused/);
      expect(after.text).toMatch(
        /<tr data-type="dashboard.pausable"[\s\S]*?data-action="resume"[\s\S]*?<\/tr>/,
      );
      const resumed = await http()
        .post('/queue/types/dashboard.pausable/resume')
        .set(admin)
        .set('Cookie', page.cookie)
        .set('x-csrf-token', page.csrf)
        .set('Origin', dash.url);
      expect(resumed.status).toBe(303);
      expect(await pausedInDb('dashboard.pausable')).toBe(false);
    });

    it('retries a failed job, and refuses to retry a completed one with its message (409)', async () => {
      const failed = await insertJob('failed', { error: 'Error: boom' });
      const page = await get(`/queue/jobs/${failed}`);
      expect(page.text).toContain('data-action="retry"');
      const retried = await post(`/queue/jobs/${failed}/retry`, page);
      expect(retried.status).toBe(303);
      expect(retried.headers.location).toBe(`/queue/jobs/${failed}?notice=retried`);
      expect((await dash.queue.getJob(failed)).status).toBe(JobStatus.Pending);

      const completed = await insertJob('completed');
      const refused = await post(`/queue/jobs/${completed}/retry`, page);
      expect(refused.status).toBe(409);
      expect(refused.text).toMatch(/<p id="error"[^>]*>[^<]*completed/);
      expect(refused.text).not.toMatch(/\n\s+at /); // no stack
      expect((await dash.queue.getJob(completed)).status).toBe(JobStatus.Completed);
      expect((await post(`/queue/jobs/${completed}/cancel`, page)).status).toBe(409);
      expect((await post('/queue/jobs/987654321/retry', page)).status).toBe(404);
    });

    it('cancels a pending job', async () => {
      const pending = await insertJob('pending');
      const page = await get(`/queue/jobs/${pending}`);
      const cancelled = await post(`/queue/jobs/${pending}/cancel`, page);
      expect(cancelled.status).toBe(303);
      expect((await dash.queue.getJob(pending)).status).toBe(JobStatus.Cancelled);
    });

    it("cancels a flow's unfinished jobs with the page token, leaves its finished one, and says how many", async () => {
      const { flowId, ids } = await flowWithFirstStepDone('dashboard.flow-cancel');
      const page = await get(`/queue/flows/${flowId}`);
      const cancelled = await post(`/queue/flows/${flowId}/cancel`, page);
      expect(cancelled.status).toBe(303);
      expect(cancelled.headers.location).toBe(
        `/queue/flows/${flowId}?notice=flow-cancelled&count=2`,
      );
      expect(await statusesInDb(ids)).toEqual(['completed', 'cancelled', 'cancelled']);
      const after = await get(cancelled.headers.location, page.cookie);
      expect(after.text).toMatch(
        /<p id="notice"[^>]*>Flow cancelled: 2 unfinished job\(s\) cancelled\.<\/p>/,
      );
      expect(tableRows(after.text, 'flow-jobs')).toEqual([
        [ids[0], 'completed'],
        [ids[1], 'cancelled'],
        [ids[2], 'cancelled'],
      ]);
      // Nothing left to cancel: no button, and a second POST cancels none.
      expect(after.text).not.toContain('data-action="cancel-flow"');
      const again = await post(`/queue/flows/${flowId}/cancel`, page);
      expect(again.status).toBe(303);
      expect(again.headers.location).toBe(`/queue/flows/${flowId}?notice=flow-cancelled&count=0`);
      // A count in the link is only ever shown as a number.
      const forged = await get(
        `/queue/flows/${flowId}?notice=flow-cancelled&count=${encodeURIComponent(SCRIPT)}`,
        page.cookie,
      );
      expect(forged.text).toMatch(/<p id="notice"[^>]*>Flow cancelled\.<\/p>/);
      expectNoRawHostile(forged.text);
    });

    it('refuses to cancel a flow without the token or from another origin (403, nothing changed), a bad id (400), an unknown flow (404)', async () => {
      const { flowId, ids } = await flowWithFirstStepDone('dashboard.flow-refused');
      const page = await get(`/queue/flows/${flowId}`);
      const path = `/queue/flows/${flowId}/cancel`;
      const noToken = await post(path, page, {});
      expect(noToken.status).toBe(403);
      expect(noToken.headers['content-security-policy']).toBe(CSP);
      expect(noToken.text).toMatch(/<p id="error"[^>]*>Refused: the form had no valid CSRF token/);
      expect((await post(path, page, { _csrf: 'x'.repeat(43) })).status).toBe(403);
      expect((await post(path, page).set('Origin', 'https://evil.example')).status).toBe(403);
      expect(await statusesInDb(ids)).toEqual(['completed', 'pending', 'blocked']);

      const bad = await post('/queue/flows/not-a-uuid/cancel', page);
      expect(bad.status).toBe(400);
      expect(bad.text).toMatch(/<p id="error"[^>]*>.*flowId/);
      const unknown = await post('/queue/flows/7d1f0c7e-2b4a-4c39-8f0e-5a6b7c8d9e0f/cancel', page);
      expect(unknown.status).toBe(404);
      expect(await statusesInDb(ids)).toEqual(['completed', 'pending', 'blocked']);
    });

    it('runs a schedule now, and 404s an unknown one', async () => {
      await dash.queue.schedule('dashboard-yearly', '0 0 1 1 *', 'dashboard.scheduled', { n: 1 });
      const page = await get('/queue');
      expect(page.text).toMatch(
        /<tr data-schedule="dashboard-yearly"[\s\S]*?data-action="run-schedule"/,
      );
      const ran = await post('/queue/schedules/dashboard-yearly/run', page);
      expect(ran.status).toBe(303);
      const { rows } = await dash.sql.query(
        `SELECT id::text FROM job_queue.jobs WHERE job_type = 'dashboard.scheduled'`,
      );
      expect(rows).toHaveLength(1);
      expect(ran.headers.location).toBe(`/queue?notice=schedule-run&job=${rows[0].id}`);
      expect((await post('/queue/schedules/nope/run', page)).status).toBe(404);
    });
  });

  describe('live', () => {
    it('streams a running job: its progress and log lines, then ends when it finishes', async () => {
      const job = await dash.queue.enqueue('dashboard.steps', {});
      await waitFor(async () => (await dash.queue.getJob(job.id)).progress === 30, {
        description: 'the job to reach its first step',
      });
      const page = await get(`/queue/jobs/${job.id}`);
      const stream = /<body data-stream="([^"]+)"/.exec(page.text)?.[1].replace(/&amp;/g, '&');
      expect(stream).toMatch(new RegExp(`^/queue/jobs/${job.id}/stream`));

      const client = new SseClient(`${dash.url}/queue/jobs/${job.id}/stream`, admin);
      try {
        const progressOf = () =>
          client.of('job').map((m) => (m.data as { progress: number }).progress);
        await waitFor(() => progressOf().includes(30), { description: 'progress 30 streamed' });
        expect(client.status).toBe(200);
        expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(client.headers['content-security-policy']).toBe(CSP);

        dash.gates.first.open();
        await waitFor(() => progressOf().includes(60), { description: 'progress 60 streamed' });
        await waitFor(
          () =>
            client
              .of('log')
              .some((m) => (m.data as { message: string }).message === `halfway ${SCRIPT}`),
          { description: 'the log line streamed' },
        );
        expect(client.ended).toBe(false);

        dash.gates.second.open();
        await waitFor(() => client.ended, { description: 'the stream to end' });
        const last = client.messages[client.messages.length - 1];
        expect(last.event).toBe('end');
        expect(last.data).toMatchObject({
          status: 'completed',
          result: { done: '<img src=x onerror=alert(1)>' },
        });
      } finally {
        client.disconnect();
      }
      // A finished job's page has no stream to follow.
      expect((await get(`/queue/jobs/${job.id}`)).text).not.toContain('data-stream=');
    });
  });
}

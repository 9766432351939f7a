import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { QueueService } from 'nest-pg-job-queue';
import { browserTestsRun, launchChromium } from '../support/chromium';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor, waitForJobToFinish } from '../support/wait-for';

/** Where the screenshots go (printed at the end); test-results/ is not committed. */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');

/** Payloads a careless page would run: each must show as text. */
const HOSTILE_NAMES = [
  '<script>window.__injected = "script"</script>.png',
  '"><img src=x onerror="window.__injected = \'img\'">.png',
];

const describeInBrowser = browserTestsRun() ? describe : describe.skip;

/**
 * The example's dashboard (/queue, behind its admin token) in the machine's Chromium, as an
 * operator uses it: signs in with the token, watches a report's progress bar move, retries a
 * failed job, pauses and resumes a type, and reads hostile payloads as text; a browser without
 * the session, and a POST without the page's CSRF token, are refused.
 */
describeInBrowser('example app: the dashboard in a browser', () => {
  let example: ExampleApp;
  let queue: QueueService;
  let browser: Browser;
  let signedIn: BrowserContext;
  let page: Page;
  let base: string;
  const screenshots: string[] = [];

  const screenshot = async (name: string) => {
    const path = join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    screenshots.push(path);
  };

  const pausedAt = async (type: string) =>
    (
      await example.sql.query<{ paused: boolean }>(
        'SELECT paused_at IS NOT NULL AS paused FROM job_queue.job_types WHERE job_type = $1',
        [type],
      )
    ).rows[0]?.paused ?? false;

  /** Reloads the overview until `selector` is on it: its counts come from the stats snapshot. */
  const showOnOverview = (selector: string) =>
    waitFor(
      async () => {
        await page.goto(`${base}/queue`);
        return (await page.$(selector)) !== null;
      },
      { intervalMs: 500, description: `${selector} on the overview` },
    );

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Each report stage takes a second: long enough to watch the bar move.
    example = await startExampleApp({ REPORT_STAGE_MS: 1_000, IMAGE_WORK_MS: 1 });
    queue = example.app.get(QueueService);
    await example.app.listen(0, '127.0.0.1');
    base = (await example.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
    signedIn = await browser.newContext();
    page = await signedIn.newPage();
    await page.goto(`${base}/sign-in`);
    await page.fill('#token', example.adminToken);
    await Promise.all([page.waitForURL(`${base}/queue`), page.click('button[type=submit]')]);
  });

  afterAll(async () => {
    await browser?.close();
    await example?.close();
    if (screenshots.length > 0) {
      process.stdout.write(
        `Dashboard screenshots:\n${screenshots.map((p) => `  ${p}\n`).join('')}`,
      );
    }
  });

  it("shows a running report's progress bar moving, without a reload", async () => {
    const { body } = await example.http().post('/reports').send({ month: '2026-11' }).expect(201);
    const id = String(body.id);
    await page.goto(`${base}/queue/jobs/${id}`);
    await page.evaluate(() => ((globalThis as { loadedOnce?: boolean }).loadedOnce = true));
    const progress = () =>
      page.$eval('progress#job-progress', (bar) =>
        Number((bar as unknown as { value: number }).value),
      );
    const first = await waitFor(async () => ((await progress()) > 0 ? progress() : undefined), {
      description: 'the progress bar to start',
    });
    await waitFor(async () => (await progress()) > first, {
      description: `the progress bar to move past ${first}`,
    });
    await screenshot('running-report');
    await waitFor(async () => (await page.textContent('#job-status'))?.trim() === 'completed', {
      description: 'the page to show the report completed',
    });
    expect(await progress()).toBe(100);
    // The same page all along: the stream updated it.
    expect(await page.evaluate(() => (globalThis as { loadedOnce?: boolean }).loadedOnce)).toBe(
      true,
    );
  });

  it('retries a failed job and sees it complete', async () => {
    const { rows } = await example.sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, data, status, attempts, max_attempts, last_error,
                                   completed_at)
       VALUES ('image.process', '{"name": "failed.png", "source": "upload"}', 'failed', 5, 5,
               'Error: the image service was down', now())
       RETURNING id::text`,
    );
    const id = rows[0].id;
    await page.goto(`${base}/queue/jobs/${id}`);
    expect((await page.textContent('#job-status'))?.trim()).toBe('failed');
    expect(await page.textContent('#job-error')).toContain('the image service was down');
    await screenshot('failed-job');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="retry"]')]);
    await waitFor(async () => (await page.textContent('#job-status'))?.trim() === 'completed', {
      description: 'the retried job to show completed',
    });
    expect((await queue.getJob(id)).status).toBe('completed');
  });

  it('pauses and resumes a type', async () => {
    const row = 'tr[data-type="image.process"]';
    await showOnOverview(row);
    await Promise.all([page.waitForNavigation(), page.click(`${row} button[data-action="pause"]`)]);
    expect(await pausedAt('image.process')).toBe(true);
    await page.waitForSelector(`${row} button[data-action="resume"]`);
    await screenshot('paused-type');
    await Promise.all([
      page.waitForNavigation(),
      page.click(`${row} button[data-action="resume"]`),
    ]);
    expect(await pausedAt('image.process')).toBe(false);
    await page.waitForSelector(`${row} button[data-action="pause"]`);
  });

  it('shows hostile payloads as text, on the job page and in the listing', async () => {
    const ids: string[] = [];
    for (const name of HOSTILE_NAMES) {
      const job = await queue.enqueue('image.process', { name, source: 'upload' });
      ids.push(job.id);
      await waitForJobToFinish(queue, job.id);
    }
    for (const [index, id] of ids.entries()) {
      await page.goto(`${base}/queue/jobs/${id}`);
      // As JSON shows them: quoted, with their quotes escaped.
      const shown = JSON.stringify(HOSTILE_NAMES[index]);
      expect(await page.textContent('pre#job-data')).toContain(shown);
      expect(await page.textContent('pre#job-result')).toContain(`thumbs/${shown.slice(1)}`);
      expect(await page.$$('pre#job-data *')).toHaveLength(0);
    }
    await screenshot('hostile-payload');
    await page.goto(`${base}/queue/jobs?type=image.process`);
    await page.waitForSelector(`tr[data-job-id="${ids[0]}"]`);
    expect(await page.evaluate(() => (globalThis as { __injected?: string }).__injected)).toBe(
      undefined,
    );
    expect(await page.$$('img[src="x"]')).toHaveLength(0);
  });

  it('refuses a browser without the session: 401 for pages, the stream and actions', async () => {
    const stranger = await browser.newContext();
    try {
      const job = await queue.enqueue('image.process', { name: 'seen.png', source: 'upload' });
      for (const path of ['/queue', '/queue/jobs', `/queue/jobs/${job.id}`]) {
        const response = await stranger.request.get(`${base}${path}`);
        expect({ path, status: response.status() }).toEqual({ path, status: 401 });
      }
      const stream = await stranger.request.get(`${base}/queue/jobs/${job.id}/stream`);
      expect(stream.status()).toBe(401);
      const pause = await stranger.request.post(`${base}/queue/types/image.process/pause`, {
        form: {},
      });
      expect(pause.status()).toBe(401);
      // A wrong token at the form gives no session either.
      const form = await stranger.newPage();
      await form.goto(`${base}/sign-in`);
      await form.fill('#token', `${example.adminToken}x`);
      await form.click('button[type=submit]');
      await form.waitForSelector('#sign-in-refused');
      expect((await stranger.request.get(`${base}/queue`)).status()).toBe(401);
    } finally {
      await stranger.close();
    }
    expect(await pausedAt('image.process')).toBe(false);
  });

  it('shows counts by type, the chart and the schedules on the overview', async () => {
    await showOnOverview('tr[data-type="report_generation"]');
    expect(await page.$('svg#throughput')).not.toBeNull();
    expect(await page.$('tr[data-schedule] button[data-action="run-schedule"]')).not.toBeNull();
    await screenshot('overview');
  });

  it("refuses a signed-in POST without the page's CSRF token", async () => {
    const url = `${base}/queue/types/image.process/pause`;
    const forms: Array<Record<string, string>> = [{}, { _csrf: 'not-the-token' }];
    for (const form of forms) {
      const response = await signedIn.request.post(url, { form, maxRedirects: 0 });
      expect(response.status()).toBe(403);
    }
    expect(await pausedAt('image.process')).toBe(false);
  });
});

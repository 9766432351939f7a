import request from 'supertest';
import { DashboardApp, startDashboardApp } from '../support/dashboard-app';
import { dashboardSuite } from '../support/dashboard-suite';

/** nest-pg-job-queue/dashboard on Fastify (@nestjs/platform-fastify). */
describe('dashboard on Fastify', () => {
  dashboardSuite('fastify');
});

/**
 * An app created with `bodyParser: false` has no parser for forms: the dashboard adds one, so
 * its forms' token is read (without it Fastify refuses the POST with a 415).
 */
describe('dashboard on Fastify without body parsers', () => {
  let dash: DashboardApp;

  beforeAll(async () => {
    dash = await startDashboardApp('fastify', { bodyParser: false });
  });

  afterAll(async () => {
    await dash?.close();
  });

  it('reads the form of a pause', async () => {
    const job = await dash.queue.enqueue('dashboard.form', {});
    const page = await request(dash.app.getHttpServer()).get(`/open/jobs/${job.id}`);
    const cookie = ([] as string[]).concat(page.headers['set-cookie'] ?? [])[0].split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
    const paused = await request(dash.app.getHttpServer())
      .post('/open/types/dashboard.form/pause')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf });
    expect(paused.status).toBe(303);
    const { rows } = await dash.sql.query(
      `SELECT 1 FROM job_queue.job_types WHERE job_type = 'dashboard.form' AND paused_at IS NOT NULL`,
    );
    expect(rows).toHaveLength(1);
  });
});

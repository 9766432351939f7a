import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

/**
 * The example's `POST /jobs/types/:type/pause` and `/resume`, as an operator uses them: image
 * jobs wait while their type is paused (reports keep running), `GET /jobs/stats` says so, and
 * they run once it is resumed.
 */
describe('example app: pause and resume a job type', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 1 });
  });

  afterAll(async () => {
    await example?.close();
  });

  const statusOf = async (id: string): Promise<string> =>
    (await example.http().get(`/jobs/${id}`).expect(200)).body.status;

  it('pauses image.process: uploads wait while reports run; resumes: they complete', async () => {
    const paused = await example.http().post('/jobs/types/image.process/pause').expect(201);
    expect(paused.body).toEqual({ type: 'image.process', paused: true });

    const upload = await example.http().post('/images').send({ name: 'held.png' }).expect(201);
    const report = await example.http().post('/reports').send({ month: '2026-10' }).expect(201);
    // The worker is claiming: the report, enqueued after the upload, completes.
    await waitFor(async () => (await statusOf(report.body.id)) === 'completed', {
      description: 'the report to complete',
    });
    expect(await statusOf(upload.body.id)).toBe('pending');
    const { body: stats } = await example.http().get('/jobs/stats?maxAgeMs=0').expect(200);
    expect(stats['image.process']).toMatchObject({ pending: 1, paused: true });
    expect(stats.report_generation).toMatchObject({ completed: 1, paused: false });

    const resumed = await example.http().post('/jobs/types/image.process/resume').expect(201);
    expect(resumed.body).toEqual({ type: 'image.process', paused: false });
    await waitFor(async () => (await statusOf(upload.body.id)) === 'completed', {
      description: 'the upload to complete once resumed',
    });
    const { body: after } = await example.http().get('/jobs/stats?maxAgeMs=0').expect(200);
    expect(after['image.process']).toMatchObject({ completed: 1, paused: false });
  });
});

import { JobEventStream } from '../../src/jobs/job-event.stream';
import { REPORT_STAGES } from '../../src/reports/reports.constants';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { SseClient } from '../support/sse-client';
import { waitFor } from '../support/wait-for';

type Stream = SseClient<Record<string, unknown>>;

/** The example's stream of a job, as its operator reads it (with the admin token). */
const follow = (url: string, token: string): Stream =>
  new SseClient(url, { authorization: `Bearer ${token}` });

/**
 * The example's `GET /jobs/:id/events`, read by a real HTTP client over a socket: the job's
 * state, then its events as they happen, until it ends; a client that leaves releases its
 * subscription; the admin guard and a 404 stand before the stream.
 */
describe('example app: a job followed over Server-Sent Events', () => {
  let example: ExampleApp;
  let base: string;

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1, REPORT_STAGE_MS: 300 });
    await example.app.listen(0, '127.0.0.1');
    base = (await example.app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await example?.close();
  });

  it('streams a report from its state through its stages to completed, then ends', async () => {
    const report = await example.http().post('/reports').send({ month: '2026-11' }).expect(201);
    const client = follow(`${base}/jobs/${report.body.id}/events`, example.adminToken);
    await waitFor(() => client.ended, { timeoutMs: 15_000, description: 'the stream to end' });

    expect(client.status).toBe(200);
    expect(client.events[0]).toBe('state');
    expect(client.events[client.events.length - 1]).toBe('completed');
    const last = client.messages[client.messages.length - 1].data;
    expect(last).toMatchObject({ id: report.body.id, status: 'completed', progress: 100 });
    // Each stage lasts 300 ms, past the progress throttle (250 ms): each is written, and sent.
    // Whatever the report reached before the client came is in the state; what came after, in
    // events, in order, and never the job's data or result.
    const progress = client.messages
      .filter((message) => message.event === 'progress')
      .map((message) => message.data.progress as number);
    expect(progress.length).toBeGreaterThan(0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    // Every line the handler logged, in order, before the final event, whenever the client came.
    const lines = client.messages.filter((message) => message.event === 'log');
    expect(lines.map((message) => message.data.message)).toEqual(
      REPORT_STAGES.map(([stage]) => `${stage} for 2026-11`),
    );
    for (const line of lines) {
      expect(Object.keys(line.data).sort()).toEqual(['at', 'attempt', 'data', 'id', 'message']);
    }
    const events = client.messages.slice(1).filter((message) => message.event !== 'log');
    for (const message of events) {
      expect(Object.keys(message.data).sort()).toEqual([
        'attempt',
        'id',
        'progress',
        'stage',
        'status',
      ]);
    }
  });

  it('ends at once for a job that has finished already', async () => {
    const upload = await example.http().post('/images').send({ name: 'done.png' }).expect(201);
    await waitFor(
      async () =>
        (await example.http().get(`/jobs/${upload.body.id}`).expect(200)).body.status ===
        'completed',
      { description: 'the upload to complete' },
    );
    const client = follow(`${base}/jobs/${upload.body.id}/events`, example.adminToken);
    await waitFor(() => client.ended, { description: 'the stream to end' });
    expect(client.messages).toEqual([
      { event: 'state', data: expect.objectContaining({ status: 'completed' }) },
    ]);
  });

  it('releases the subscription of a client that disconnects', async () => {
    const stream = example.app.get(JobEventStream);
    await example.http().post('/jobs/types/image.process/pause').expect(201);
    try {
      const upload = await example.http().post('/images').send({ name: 'wait.png' }).expect(201);
      const client = follow(`${base}/jobs/${upload.body.id}/events`, example.adminToken);
      await waitFor(() => client.events.includes('state'), { description: 'the state message' });
      expect(stream.followers).toBe(1);
      client.disconnect();
      await waitFor(() => stream.followers === 0, { description: 'the subscription released' });
    } finally {
      await example.http().post('/jobs/types/image.process/resume').expect(201);
    }
  });

  it('wants the admin token, and answers an unknown job with a 404 before any stream', async () => {
    await example.anonymous().get('/jobs/1/events').expect(401);
    const missing = await example.http().get('/jobs/999999/events').expect(404);
    expect(missing.headers['content-type']).toMatch(/application\/json/);
  });
});

import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Job } from 'nest-pg-job-queue';
import { JobQueueTracingModule } from 'nest-pg-job-queue/opentelemetry';
import { createTestDatabase, TestDatabase } from '../support/database';
import { spanRecord, SpanRecord, useInMemoryTracing } from '../support/in-memory-tracing';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { startWorkerApp, WorkerApp } from '../support/worker-test-app';

const REPO_ROOT = resolve(__dirname, '..', '..');
const exporter = useInMemoryTracing();

/** The traced worker process and the lines it printed. */
class TracedWorker {
  private readonly lines: string[] = [];
  readonly child: ChildProcess;

  constructor(databaseUrl: string) {
    this.child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'test/fixtures/traced-worker-process.ts',
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, TRACED_DATABASE_URL: databaseUrl },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.lines.push(line));
  }

  ready(): Promise<unknown> {
    return waitFor(() => this.lines.includes('ready') || undefined, {
      timeoutMs: 60_000,
      description: 'the traced worker process to start',
    });
  }

  /** The spans the process has finished, as it reports them. */
  async spans(): Promise<SpanRecord[]> {
    const before = this.lines.length;
    this.child.stdin!.write('dump\n');
    const line = await waitFor(
      () => this.lines.slice(before).find((printed) => printed.startsWith('spans ')),
      { timeoutMs: 10_000, description: 'the traced worker to report its spans' },
    );
    return JSON.parse(line.slice('spans '.length)) as SpanRecord[];
  }

  async stop(): Promise<void> {
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.stdin!.end();
    await exited;
  }
}

/**
 * Traces across processes: a request in this process enqueues, a worker in another process runs
 * the job, and the run continues the request's trace through the job's `meta`.
 */
describe('opentelemetry: spans from enqueue to run, across processes', () => {
  let db: TestDatabase;
  let producer: WorkerApp;
  let worker: TracedWorker;

  beforeAll(async () => {
    db = await createTestDatabase();
    producer = await startWorkerApp({
      url: db.url,
      queueOptions: { worker: false },
      imports: [JobQueueTracingModule.forRoot()],
    });
    worker = new TracedWorker(db.url);
    await worker.ready();
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await producer?.close();
    await db?.drop();
  });

  const finished = (id: string): Promise<Job> => waitForJobToFinish(producer.queue, id);

  it("continues the request's trace in the worker process: request → send → process → the handler's own span", async () => {
    const tracer = trace.getTracer('test-request');
    const job = await tracer.startActiveSpan('GET /reports', async (request) => {
      try {
        return await producer.queue.enqueue('traced.report', { region: 'eu' });
      } finally {
        request.end();
      }
    });
    expect(job.meta).toEqual({ otel: { traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-/) } });
    await finished(job.id);

    const here = exporter.getFinishedSpans().map(spanRecord);
    const request = here.find((span) => span.name === 'GET /reports')!;
    const send = here.find((span) => span.name === 'send traced.report')!;
    expect(send).toMatchObject({
      kind: SpanKind.PRODUCER,
      traceId: request.traceId,
      parentSpanId: request.spanId,
      attributes: {
        'messaging.system': 'nest_pg_job_queue',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'enqueue',
        'messaging.destination.name': 'traced.report',
        'messaging.message.id': job.id,
      },
    });

    const there = await waitFor(
      async () => {
        const spans = await worker.spans();
        return spans.some((span) => span.name === 'render report') ? spans : undefined;
      },
      { timeoutMs: 10_000, description: "the worker's spans of the run" },
    );
    const run = there.find((span) => span.name === 'process traced.report')!;
    expect(run).toMatchObject({
      kind: SpanKind.CONSUMER,
      traceId: request.traceId,
      parentSpanId: send.spanId,
      attributes: {
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'traced.report',
        'messaging.message.id': job.id,
        'nest_pg_job_queue.job.attempt': 1,
        'nest_pg_job_queue.job.outcome': 'completed',
      },
      status: { code: SpanStatusCode.UNSET },
    });
    const handlerSpan = there.find((span) => span.name === 'render report')!;
    expect(handlerSpan).toMatchObject({ traceId: request.traceId, parentSpanId: run.spanId });
  });

  it('records a failed run on its span, and one send span per enqueueMany', async () => {
    const [broken, report] = await producer.queue.enqueueMany([
      { type: 'traced.broken', data: {} },
      { type: 'traced.report', data: { region: 'us' } },
    ]);
    expect(broken.meta).toEqual(report.meta); // one call, one producer span
    await finished(broken.id);
    await finished(report.id);

    const send = exporter
      .getFinishedSpans()
      .map(spanRecord)
      .filter((span) => span.attributes['messaging.operation.name'] === 'enqueueMany');
    expect(send).toEqual([
      expect.objectContaining({
        name: 'send',
        attributes: expect.objectContaining({ 'messaging.batch.message_count': 2 }),
      }),
    ]);
    const there = await waitFor(
      async () => {
        const spans = await worker.spans();
        const runs = spans.filter((span) => span.attributes['messaging.message.id'] === broken.id);
        return runs.length > 0 ? runs : undefined;
      },
      { timeoutMs: 10_000, description: 'the span of the failed run' },
    );
    expect(there).toEqual([
      expect.objectContaining({
        name: 'process traced.broken',
        traceId: send[0].traceId,
        parentSpanId: send[0].spanId,
        status: { code: SpanStatusCode.ERROR, message: 'the report server is down' },
        events: ['exception'],
        attributes: expect.objectContaining({ 'nest_pg_job_queue.job.outcome': 'failed' }),
      }),
    ]);
  });
  it("starts a trace at each cron fire in the node that fired it, and runSchedule continues the caller's", async () => {
    await producer.queue.schedule('traced-every-second', '* * * * * *', 'traced.report', {});
    // The worker process ticks the schedules: a fire is a send there, and the run its child.
    const fire = await waitFor(
      async () => {
        const spans = await worker.spans();
        const send = spans.find((span) => span.name === 'send traced.report');
        const run =
          send &&
          spans.find(
            (span) => span.name === 'process traced.report' && span.parentSpanId === send.spanId,
          );
        return send && run ? { send, run } : undefined;
      },
      { timeoutMs: 15_000, description: 'a cron fire and its run, traced in the worker process' },
    );
    await producer.queue.unschedule('traced-every-second');
    expect(fire.send.kind).toBe(SpanKind.PRODUCER);
    expect(fire.send.parentSpanId).toBeUndefined(); // a trace of its own
    expect(fire.run).toMatchObject({
      traceId: fire.send.traceId,
      attributes: expect.objectContaining({
        'messaging.message.id': fire.send.attributes['messaging.message.id'],
      }),
    });

    await producer.queue.schedule('traced-yearly', '0 0 1 1 *', 'traced.report', {});
    const tracer = trace.getTracer('test-request');
    const job = await tracer.startActiveSpan('POST /schedules/run', async (request) => {
      try {
        return await producer.queue.runSchedule('traced-yearly');
      } finally {
        request.end();
      }
    });
    await producer.queue.unschedule('traced-yearly');
    expect(job.meta).toEqual({ otel: { traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-/) } });
    const here = exporter.getFinishedSpans().map(spanRecord);
    const request = here.find((span) => span.name === 'POST /schedules/run')!;
    const send = here.find((span) => span.attributes['messaging.message.id'] === job.id)!;
    expect(send).toMatchObject({ name: 'send traced.report', parentSpanId: request.spanId });
    await finished(job.id);
    const run = await waitFor(
      async () =>
        (await worker.spans()).find(
          (span) =>
            span.name === 'process traced.report' &&
            span.attributes['messaging.message.id'] === job.id,
        ),
      { timeoutMs: 10_000, description: "the run of runSchedule's job" },
    );
    expect(run).toMatchObject({ traceId: request.traceId, parentSpanId: send.spanId });
  });
});

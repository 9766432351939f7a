import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Controller, INestApplication, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClsModule, ClsService } from 'nestjs-cls';
import request from 'supertest';
import { Job, JobQueueModule, QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { waitFor, waitForJobToFinish } from '../support/wait-for';
import { clsJobContext } from '../fixtures/cls-job-context';

const REPO_ROOT = resolve(__dirname, '..', '..');

/** The producer's endpoint: enqueues a job from inside the request's CLS context. */
@Controller('reports')
class ReportsController {
  constructor(private readonly queue: QueueService) {}

  @Post()
  async create(): Promise<{ id: string }> {
    const job = await this.queue.enqueue('cls.tenant', {});
    return { id: job.id };
  }
}

/**
 * The README's nestjs-cls recipe across processes: a tenant id (and a correlation id) set in an
 * HTTP request's CLS context in this process travels in the job's `meta` and is in CLS again
 * when a worker in another process runs the job.
 */
describe('per-job context with nestjs-cls, across processes', () => {
  let db: TestDatabase;
  let producer: INestApplication;
  let worker: ChildProcess;
  const lines: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    @Module({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        ClsModule.forRoot({
          global: true,
          middleware: {
            mount: true,
            setup: (cls, req: { headers: Record<string, string | string[] | undefined> }) => {
              cls.set('tenantId', req.headers['x-tenant-id']);
              cls.set('correlationId', req.headers['x-correlation-id']);
            },
          },
        }),
        JobQueueModule.forRootAsync({
          inject: [ClsService],
          useFactory: (cls: ClsService) => ({ worker: false, context: clsJobContext(cls) }),
        }),
      ],
      controllers: [ReportsController],
    })
    class ProducerModule {}
    const moduleRef = await Test.createTestingModule({ imports: [ProducerModule] }).compile();
    producer = moduleRef.createNestApplication({ logger: ['error'] });
    await producer.init();

    worker = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'test/fixtures/cls-worker-process.ts',
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, CLS_DATABASE_URL: db.url },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    createInterface({ input: worker.stdout! }).on('line', (line) => lines.push(line));
    await waitFor(() => lines.includes('ready') || worker.exitCode !== null, {
      timeoutMs: 60_000,
      description: 'the worker process to start',
    });
    expect(worker.exitCode).toBeNull();
  }, 90_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((done) => worker.once('exit', done));
      worker.stdin!.end();
      await exited;
    }
    await producer?.close();
    await db?.drop();
  });

  const queue = (): QueueService => producer.get(QueueService);

  it('runs the handler in another process with the tenant id the request set', async () => {
    const response = await request(producer.getHttpServer())
      .post('/reports')
      .set('x-tenant-id', 'acme')
      .set('x-correlation-id', 'req-7')
      .expect(201);
    const id = (response.body as { id: string }).id;
    expect((await queue().getJob(id)).meta).toEqual({ tenantId: 'acme', correlationId: 'req-7' });

    const done: Job = await waitForJobToFinish(queue(), id);
    expect(done.result).toMatchObject({ tenantId: 'acme', correlationId: 'req-7' });
    const { pid } = done.result as { pid: number };
    expect(pid).toBe(worker.pid);
    expect(pid).not.toBe(process.pid);
  });

  it('leaves a request without a tenant without one, and keeps runs apart', async () => {
    const server = producer.getHttpServer();
    const [plain, globex] = await Promise.all([
      request(server).post('/reports').expect(201),
      request(server).post('/reports').set('x-tenant-id', 'globex').expect(201),
    ]);
    const plainJob = await waitForJobToFinish(queue(), (plain.body as { id: string }).id);
    const globexJob = await waitForJobToFinish(queue(), (globex.body as { id: string }).id);
    expect(plainJob.meta).toBeNull();
    expect(plainJob.result).toMatchObject({ tenantId: null, correlationId: null });
    expect(globexJob.result).toMatchObject({ tenantId: 'globex', correlationId: null });
  });

  it('is the recipe the README shows', () => {
    const readme = readFileSync(resolve(REPO_ROOT, 'libs/job-queue/README.md'), 'utf8');
    const block = /<!-- file: cls-job-context\.ts -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const fixture = readFileSync(resolve(__dirname, '../fixtures/cls-job-context.ts'), 'utf8');
    expect(block).toBe(fixture);
  });
});

import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import request from 'supertest';
import { JobQueueModule, QueueService } from 'nest-pg-job-queue';
import { ADMIN_TOKEN_ENV } from '../../src/common/admin-token.guard';
import { MetricsModule } from '../../src/metrics/metrics.module';
import { createTestDatabase, TestDatabase } from '../support/database';

const TOKEN = 'metrics-test-token';

/** The example app's MetricsModule beside an enqueue-only queue, over HTTP. */
describe('example app: GET /metrics', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const savedToken = process.env[ADMIN_TOKEN_ENV];

  beforeAll(async () => {
    db = await createTestDatabase();
    process.env[ADMIN_TOKEN_ENV] = TOKEN; // read as the guard is made
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        JobQueueModule.forRoot({ worker: false }),
        MetricsModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    if (savedToken === undefined) delete process.env[ADMIN_TOKEN_ENV];
    else process.env[ADMIN_TOKEN_ENV] = savedToken;
    await db?.drop();
  });

  it("serves the registry's text, in Prometheus' content type", async () => {
    await app.get(QueueService).enqueue('image.process', {});
    const response = await request(app.getHttpServer())
      .get('/metrics')
      .set('authorization', `Bearer ${TOKEN}`)
      .expect(200);
    // register.contentType; Express writes its parameters in another order, which is the same.
    const contentType = String(response.headers['content-type']).split(/; */);
    expect(contentType.sort()).toEqual(['charset=utf-8', 'text/plain', 'version=0.0.4']);
    expect(response.text).toContain('job_queue_jobs_enqueued_total{type="image.process"} 1\n');
  });

  it('wants the admin token, like the other operator routes', async () => {
    await request(app.getHttpServer()).get('/metrics').expect(401);
  });
});

import { Injectable, INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  Job,
  JobContext,
  JobHandler,
  JobQueueModule,
  JobStatus,
  QueueService,
} from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { waitFor } from '../support/wait-for';

@Injectable()
class EchoHandlers {
  readonly seen: string[] = [];

  @JobHandler('echo')
  async echo(job: Job<{ text: string }>, ctx: JobContext): Promise<{ echoed: string }> {
    this.seen.push(job.id);
    await ctx.progress(50, 'halfway');
    return { echoed: job.data.text };
  }
}

describe('worker smoke', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url }),
        JobQueueModule.forRoot({ worker: { concurrency: 4, pollIntervalMs: 50 } }),
      ],
      providers: [EchoHandlers],
    }).compile();
    app = await moduleRef.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('runs an enqueued job and stores its result', async () => {
    const queue = app.get(QueueService);
    const job = await queue.enqueue('echo', { text: 'hi' });
    const done = await waitFor(async () => {
      const current = await queue.getJob(job.id);
      return current.status === JobStatus.Completed ? current : undefined;
    });
    expect(done.result).toEqual({ echoed: 'hi' });
    expect(done.attempts).toBe(1);
    expect(done.progress).toBe(50);
    expect(done.currentStage).toBe('halfway');
    expect(app.get(EchoHandlers).seen).toEqual([job.id]);
  });
});

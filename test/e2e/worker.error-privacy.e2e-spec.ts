import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Job, JobHandler, JobQueueModule, JobStatus, QueueService } from 'nest-pg-job-queue';
import { MAX_ERROR_TEXT_LENGTH } from '../../libs/job-queue/src/worker/error-text';
import { CapturingLogger } from '../support/capturing-logger';
import { createTestDatabase, TestDatabase } from '../support/database';
import { waitFor } from '../support/wait-for';

const HUGE = 'huge-error';
const FLAKY = 'flaky-secret';
const PAYLOAD_SECRET = 'payload-secret-7f3a';
const ERROR_SECRET = 'error-secret-91bc';
const ONE_MB = 1024 * 1024;
const TRUNCATION_MARK = '… (truncated)';

@Injectable()
class PrivacyHandlers {
  /** Throws a 1 MB message: what a handler rethrowing a whole response body might do. */
  @JobHandler(HUGE, { maxAttempts: 1 })
  huge(): never {
    throw new Error(ERROR_SECRET + 'x'.repeat(ONE_MB));
  }

  /** Fails once with a message naming its payload, then succeeds. */
  @JobHandler(FLAKY, { maxAttempts: 2, backoff: { baseDelayMs: 10, maxDelayMs: 10, jitter: 0 } })
  flaky(job: Job<{ secret: string }>): { ok: true } {
    if (job.attempts === 1) throw new Error(`${ERROR_SECRET} while handling ${job.data.secret}`);
    return { ok: true };
  }
}

/**
 * `last_error` is bounded (a 1 MB message is stored truncated), and the library's own log lines
 * carry neither job payloads nor handler error text: those stay in the jobs table.
 */
describe('worker: error size and what is logged', () => {
  let db: TestDatabase;
  let app: TestingModule | undefined;
  const logs = new CapturingLogger();

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        JobQueueModule.forRoot({ worker: { pollIntervalMs: 50 } }),
      ],
      providers: [PrivacyHandlers],
    })
      .setLogger(logs)
      .compile();
    await app.init();
  });

  afterAll(async () => {
    try {
      await app?.close();
    } finally {
      await db?.drop();
    }
  });

  const settled = (id: string, status: JobStatus): Promise<Job> =>
    waitFor(
      async () => {
        const job = await app!.get(QueueService).getJob(id);
        return job.status === status ? job : undefined;
      },
      { description: `job ${id} to be ${status}` },
    );

  it('stores a 1 MB error message truncated to MAX_ERROR_TEXT_LENGTH', async () => {
    const job = await app!.get(QueueService).enqueue(HUGE, { secret: PAYLOAD_SECRET });
    await settled(job.id, JobStatus.Failed);
    const [{ length, head, tail }] = await app!.get(DataSource).query(
      `SELECT length(last_error) AS length, left(last_error, 40) AS head,
                right(last_error, 20) AS tail
         FROM job_queue.jobs WHERE id = $1`,
      [job.id],
    );
    expect(length).toBe(MAX_ERROR_TEXT_LENGTH + TRUNCATION_MARK.length);
    expect(head).toBe(`Error: ${ERROR_SECRET}${'x'.repeat(40 - 7 - ERROR_SECRET.length)}`);
    expect(tail.endsWith(TRUNCATION_MARK)).toBe(true);
  });

  it('logs neither payloads nor handler errors', async () => {
    const job = await app!.get(QueueService).enqueue(FLAKY, { secret: PAYLOAD_SECRET });
    const done = await settled(job.id, JobStatus.Completed);
    expect(done.lastError).toContain(PAYLOAD_SECRET);
    expect(logs.lines.length).toBeGreaterThan(0); // the capture works: the worker said it started
    const leaks = logs.lines.filter(
      (line) => line.message.includes(PAYLOAD_SECRET) || line.message.includes(ERROR_SECRET),
    );
    expect(leaks).toEqual([]);
  });
});

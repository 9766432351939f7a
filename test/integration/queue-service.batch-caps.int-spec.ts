import { InvalidJobInputError, JobQueueModuleOptions, QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { expectNoPayload } from '../support/payload-privacy';
import { QueryCounter } from '../support/query-counter';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';

const SECRET = 'payload-secret-77d0';
const ONE_MB = 1024 * 1024;

/**
 * `maxBatchSize` and `maxBatchBytes` bound one `enqueueMany` call: over either, a typed error names
 * the option before the statement is built (or the rest of the batch serialised), and nothing is
 * written.
 */
describe('QueueService: enqueueMany batch caps', () => {
  let db: TestDatabase;
  let small: QueueTestingModule;
  let defaults: QueueTestingModule;
  const counter = new QueryCounter();

  beforeAll(async () => {
    db = await createTestDatabase();
    small = await createQueueTestingModule({
      url: db.url,
      queueOptions: { maxBatchSize: 3, maxBatchBytes: 120 } as JobQueueModuleOptions,
      typeOrmOptions: { logger: counter },
    });
    defaults = await createQueueTestingModule({ url: db.url });
  });

  afterAll(async () => {
    await small?.close();
    await defaults?.close();
    await db?.drop();
  });

  const count = async (): Promise<number> => {
    const [row] = await defaults.dataSource.query(
      `SELECT count(*)::int AS count FROM job_queue.jobs`,
    );
    return row.count;
  };

  async function expectCapped(
    queue: QueueService,
    jobs: Parameters<QueueService['enqueueMany']>[0],
    option: string,
  ): Promise<void> {
    const before = await count();
    counter.reset();
    const error = await queue.enqueueMany(jobs).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toMatchObject({ field: 'jobs' });
    expect((error as Error).message).toContain(option);
    expect(counter.count).toBe(0);
    expect(await count()).toBe(before);
    expectNoPayload(error, SECRET);
  }

  const item = (n: number) => ({ type: 'capped', data: { n, note: SECRET } });

  it('refuses more jobs than maxBatchSize, and takes exactly that many', async () => {
    await expectCapped(small.queue, [item(1), item(2), item(3), item(4)], 'maxBatchSize');
    await expect(small.queue.enqueueMany([item(1), item(2), item(3)])).resolves.toHaveLength(3);
  });

  it('refuses more bytes of data than maxBatchBytes, counting UTF-8 bytes', async () => {
    // {"note":"<secret>éééééx"}: 11 + 19 + 10 (+ 1) bytes of JSON.
    const sized = (extra: string) => ({
      type: 'capped',
      data: { note: SECRET + 'é'.repeat(5) + extra },
    });
    expect(Buffer.byteLength(JSON.stringify(sized('').data))).toBe(40);
    await expect(small.queue.enqueueMany([sized(''), sized(''), sized('')])).resolves.toHaveLength(
      3,
    );
    await expectCapped(small.queue, [sized(''), sized(''), sized('x')], 'maxBatchBytes');
  });

  it('defaults to 10,000 jobs per call', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => item(i));
    await expectCapped(defaults.queue, many, 'maxBatchSize');
    await expect(defaults.queue.enqueueMany(many.slice(1))).resolves.toHaveLength(10_000);
  });

  it('defaults to 32 MB of data per call, refused before the rest is serialised', async () => {
    const blob = 'x'.repeat(ONE_MB - 2); // 1 MB of JSON each
    const jobs = Array.from({ length: 33 }, () => ({ type: 'capped', data: blob }));
    let serialised = 0;
    const spy = { type: 'capped', data: { toJSON: () => ((serialised += 1), SECRET) } };
    await expectCapped(defaults.queue, [...jobs, spy], 'maxBatchBytes');
    expect(serialised).toBe(0);
  });
});

import { DataSource } from 'typeorm';
import {
  InvalidJobInputError,
  Job,
  JobNotFoundError,
  JobQueueError,
  JobStateConflictError,
  JobStatus,
  QueueService,
} from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { QueryCounter } from '../support/query-counter';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';

const ONE_MB = 1024 * 1024;
const UNKNOWN_ID = '9000000000';

/**
 * Every bad call throws its typed error and leaves the table exactly as it was. Input errors are
 * caught before anything is sent to PostgreSQL at all.
 */
describe('QueueService: bad input', () => {
  let db: TestDatabase;
  let app: QueueTestingModule;
  let smallApp: QueueTestingModule;
  let queue: QueueService;
  let smallQueue: QueueService;
  let dataSource: DataSource;
  const counter = new QueryCounter();
  const jobs: Partial<Record<JobStatus, Job>> = {};

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createQueueTestingModule({ url: db.url, typeOrmOptions: { logger: counter } });
    smallApp = await createQueueTestingModule({
      url: db.url,
      queueOptions: { maxPayloadBytes: 64 },
      typeOrmOptions: { logger: counter },
    });
    ({ queue, dataSource } = app);
    smallQueue = smallApp.queue;
    for (const status of Object.values(JobStatus)) {
      jobs[status] = await queue.enqueue('seeded', { status });
      await dataSource.query(`UPDATE job_queue.jobs SET status = $2 WHERE id = $1`, [
        jobs[status]!.id,
        status,
      ]);
    }
  });

  afterAll(async () => {
    await smallApp?.close();
    await app?.close();
    await db?.drop();
  });

  /** A digest of every column of every row, and the id sequence: any write would show. */
  const snapshot = async (): Promise<unknown> => {
    const [row] = await dataSource.query(
      `SELECT (SELECT coalesce(jsonb_object_agg(id, md5(to_jsonb(j)::text)), '{}') FROM job_queue.jobs j)
                AS rows,
              (SELECT last_value FROM job_queue.jobs_id_seq) AS last_id`,
    );
    return row;
  };

  /** Runs `call`, which must reject; returns the error and the statements it sent. */
  async function rejection(
    call: () => Promise<unknown>,
  ): Promise<{ error: unknown; sent: number }> {
    counter.reset();
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (error === undefined) throw new Error('expected the call to reject, it resolved');
    return { error, sent: counter.count };
  }

  /** `call` throws InvalidJobInputError naming `field`, sends no SQL, changes no row. */
  async function expectInvalid(
    call: () => Promise<unknown>,
    field: string,
    value?: { value: unknown },
  ): Promise<InvalidJobInputError> {
    const before = await snapshot();
    const { error, sent } = await rejection(call);
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toBeInstanceOf(JobQueueError);
    expect(error).toMatchObject({ field, ...value });
    expect((error as Error).message).toContain(field);
    expect(sent).toBe(0);
    expect(await snapshot()).toEqual(before);
    return error as InvalidJobInputError;
  }

  /** `call` throws `type` with `props`, changes no row. */
  async function expectRejectedUnchanged(
    call: () => Promise<unknown>,
    type: typeof JobNotFoundError | typeof JobStateConflictError,
    props: Record<string, unknown>,
  ): Promise<void> {
    const before = await snapshot();
    const { error } = await rejection(call);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject(props);
    expect(await snapshot()).toEqual(before);
  }

  describe('priority must be a safe integer (PostgreSQL integer range)', () => {
    it.each([1.5, NaN, 2 ** 40, '5', Infinity, -(2 ** 31) - 1, 2 ** 31, null])(
      'refuses %p',
      async (priority) => {
        const error = await expectInvalid(
          () => queue.enqueue('t', {}, { priority: priority as never }),
          'priority',
          { value: priority },
        );
        expect(error.message).toContain(typeof priority === 'string' ? `'5'` : String(priority));
      },
    );

    it('accepts the integer bounds', async () => {
      const low = await queue.enqueue('bounds', {}, { priority: -(2 ** 31) });
      const high = await queue.enqueue('bounds', {}, { priority: 2 ** 31 - 1 });
      expect([low.priority, high.priority]).toEqual([-(2 ** 31), 2 ** 31 - 1]);
    });
  });

  describe('data must be JSON-serialisable without loss', () => {
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;

    it.each<[string, unknown, string]>([
      ['a BigInt', 10n, 'data'],
      ['a BigInt inside', { total: 10n }, 'data.total'],
      ['a circular object', circular, 'data'],
      ['a function', () => 1, 'data'],
      ['a nested function', { a: { b: () => 1 } }, 'data.a.b'],
      ['a function in an array', { list: [1, { f: () => 1 }] }, 'data.list[1].f'],
      ['a symbol', { s: Symbol('s') }, 'data.s'],
      ['NaN', { n: NaN }, 'data.n'],
      ['Infinity', [Infinity], 'data[0]'],
      ['undefined', undefined, 'data'],
      ['a NUL character (jsonb cannot store it)', { text: 'a\u0000b' }, 'data.text'],
    ])('refuses %s', async (_, data, field) => {
      await expectInvalid(() => queue.enqueue('t', data), field);
    });

    it('refuses data over a configured maxPayloadBytes, counting UTF-8 bytes', async () => {
      // 'é' is two bytes: 31 of them plus the quotes is exactly 64 bytes of JSON.
      const fits = await smallQueue.enqueue('payload', 'é'.repeat(31));
      expect(fits.data).toBe('é'.repeat(31));
      const error = await expectInvalid(
        () => smallQueue.enqueue('payload', 'é'.repeat(32)),
        'data',
      );
      expect(error.message).toMatch(/66 bytes.*at most 64 bytes/);
    });

    it('refuses data over the default 1 MB, and takes exactly 1 MB', async () => {
      const error = await expectInvalid(
        () => queue.enqueue('payload', { blob: 'x'.repeat(ONE_MB) }),
        'data',
      );
      expect(error.message).toContain(`at most ${ONE_MB} bytes`);

      const exact = await queue.enqueue('payload', 'x'.repeat(ONE_MB - 2));
      const [{ bytes }] = await dataSource.query(
        `SELECT octet_length(data::text) AS bytes FROM job_queue.jobs WHERE id = $1`,
        [exact.id],
      );
      expect(bytes).toBe(ONE_MB);
    });
  });

  describe('job type must be a non-blank string of at most 255 characters', () => {
    it.each<[string, unknown]>([
      ['empty', ''],
      ['blank', '  \t '],
      ['256 characters', 'x'.repeat(256)],
      ['not a string', 42],
      ['missing', undefined],
    ])('refuses %s', async (_, jobType) => {
      await expectInvalid(() => queue.enqueue(jobType as string, {}), 'type');
    });

    it('accepts 255 characters', async () => {
      const job = await queue.enqueue('y'.repeat(255), {});
      expect(job.jobType).toHaveLength(255);
    });
  });

  describe('scheduling options', () => {
    it.each<[string, unknown]>([
      ['an invalid Date', new Date('x')],
      ['a string', '2030-01-01T00:00:00Z'],
      ['a number', Date.now()],
    ])('runAt refuses %s', async (_, runAt) => {
      await expectInvalid(() => queue.enqueue('t', {}, { runAt: runAt as Date }), 'runAt');
    });

    it('refuses runAt and delayMs together', async () => {
      await expectInvalid(
        () => queue.enqueue('t', {}, { runAt: new Date(), delayMs: 1_000 }),
        'delayMs',
      );
    });

    it.each([-1, 1.5, '100'])('delayMs refuses %p', async (delayMs) => {
      await expectInvalid(() => queue.enqueue('t', {}, { delayMs: delayMs as never }), 'delayMs');
    });

    it.each([0, -1, 2.5])('maxAttempts refuses %p', async (maxAttempts) => {
      await expectInvalid(() => queue.enqueue('t', {}, { maxAttempts }), 'maxAttempts');
    });

    it.each(['', 'k'.repeat(256)])('uniqueKey refuses %p', async (uniqueKey) => {
      await expectInvalid(() => queue.enqueue('t', {}, { uniqueKey }), 'uniqueKey');
    });
  });

  describe('concurrencyKey must be text PostgreSQL stores, of 1 to 255 characters', () => {
    it.each<[string, unknown]>([
      ['a NUL character', 'tenant\u00001'],
      ['an unpaired surrogate', 'tenant-\uD800'],
      ['256 characters', 'k'.repeat(256)],
      ['the empty string', ''],
      ['a number', 42],
      ['null', null],
    ])('refuses %s, naming the field and the value', async (_, concurrencyKey) => {
      const error = await expectInvalid(
        () => queue.enqueue('t', {}, { concurrencyKey: concurrencyKey as string }),
        'concurrencyKey',
        { value: concurrencyKey },
      );
      expect(error.message).toMatch(/^Invalid job concurrencyKey: /);
    });

    it('accepts 255 characters, a surrogate pair counting as one (as char_length does)', async () => {
      const concurrencyKey = 'k'.repeat(254) + '\u{1F600}';
      const job = await queue.enqueue('keyed', {}, { concurrencyKey });
      const [{ length }] = await dataSource.query(
        `SELECT char_length(concurrency_key) AS length FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      expect([job.concurrencyKey, length]).toEqual([concurrencyKey, 255]);
    });
  });

  describe('unknown option keys', () => {
    it('refuses a misspelt option, naming it', async () => {
      const error = await expectInvalid(
        () => queue.enqueue('t', {}, { priorty: 5 } as never),
        'priorty',
        { value: 5 },
      );
      expect(error.message).toContain('Known options: priority');
    });

    it.each(['type', 'data'])('refuses `%s` in the options of enqueue', async (key) => {
      await expectInvalid(() => queue.enqueue('t', {}, { [key]: 'x' } as never), key);
    });

    it('refuses `manager` inside an enqueueMany item (it applies to the whole call)', async () => {
      await expectInvalid(
        () => queue.enqueueMany([{ type: 't', data: {}, manager: dataSource.manager } as never]),
        'jobs[0].manager',
      );
    });
  });

  describe('enqueueMany writes nothing when one item is bad', () => {
    const good = (n: number) => ({ type: 'many_good', data: { n } });

    it.each<[string, unknown, string]>([
      ['a bad priority', { type: 't', data: {}, priority: 1.5 }, 'jobs[3].priority'],
      ['a bad type', { type: ' ', data: {} }, 'jobs[3].type'],
      ['bad data', { type: 't', data: { deep: { fn: () => 1 } } }, 'jobs[3].data.deep.fn'],
      ['a bad runAt', { type: 't', data: {}, runAt: new Date('x') }, 'jobs[3].runAt'],
      ['an unknown key', { type: 't', data: {}, prio: 1 }, 'jobs[3].prio'],
      ['not an object', 'job', 'jobs[3]'],
      ['null', null, 'jobs[3]'],
    ])('%s at index 3', async (_, bad, field) => {
      await expectInvalid(
        () => queue.enqueueMany([good(0), good(1), good(2), bad as never, good(4)]),
        field,
      );
      const [{ count }] = await dataSource.query(
        `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type = 'many_good'`,
      );
      expect(count).toBe(0);
    });

    it.each<[string, unknown]>([
      ['a NUL character', 'a\u0000'],
      ['an unpaired surrogate', '\uDC00'],
      ['256 characters', 'k'.repeat(256)],
      ['the empty string', ''],
      ['a number', 7],
    ])('a concurrencyKey of %s at index 3, naming it and the value', async (_, concurrencyKey) => {
      const bad = { type: 'many_good', data: { n: 3 }, concurrencyKey };
      await expectInvalid(
        () => queue.enqueueMany([good(0), good(1), good(2), bad as never, good(4)]),
        'jobs[3].concurrencyKey',
        { value: concurrencyKey },
      );
      const [{ count }] = await dataSource.query(
        `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type = 'many_good'`,
      );
      expect(count).toBe(0);
    });

    it('refuses a non-array', async () => {
      await expectInvalid(() => queue.enqueueMany({ type: 't', data: {} } as never), 'jobs');
    });
  });

  describe('progress must be a number from 0 to 100', () => {
    it.each([-1, 101, NaN, '50', Infinity, null])('refuses %p', async (progress) => {
      await expectInvalid(
        () => queue.updateProgress(jobs.pending!.id, progress as never),
        'progress',
      );
    });

    it('refuses a stage over 255 characters', async () => {
      await expectInvalid(
        () => queue.updateProgress(jobs.pending!.id, 50, 's'.repeat(256)),
        'stage',
      );
    });
  });

  describe('job ids', () => {
    it.each([0, -1, 1.5, 'abc', '', '12abc', null])(
      'refuses a malformed id %p with InvalidJobInputError',
      async (id) => {
        await expectInvalid(() => queue.getJob(id as never), 'id');
        await expectInvalid(() => queue.cancel(id as never), 'id');
      },
    );

    it('getJob of an unknown id throws JobNotFoundError', async () => {
      await expectRejectedUnchanged(() => queue.getJob(UNKNOWN_ID), JobNotFoundError, {
        jobId: UNKNOWN_ID,
        message: expect.stringContaining(UNKNOWN_ID),
      });
    });

    it('updateProgress of an unknown id throws JobNotFoundError', async () => {
      await expectRejectedUnchanged(
        () => queue.updateProgress(UNKNOWN_ID, 10, 'stage'),
        JobNotFoundError,
        { jobId: UNKNOWN_ID },
      );
    });

    it('cancel of an unknown id throws JobNotFoundError', async () => {
      await expectRejectedUnchanged(() => queue.cancel(UNKNOWN_ID), JobNotFoundError, {
        jobId: UNKNOWN_ID,
      });
    });

    it('retry of an unknown id throws JobNotFoundError', async () => {
      await expectRejectedUnchanged(() => queue.retry(UNKNOWN_ID), JobNotFoundError, {
        jobId: UNKNOWN_ID,
      });
    });

    it('a numeric id works like its string', async () => {
      const job = await queue.getJob(Number(jobs.pending!.id));
      expect(job.id).toBe(jobs.pending!.id);
    });
  });

  describe('actions the job state does not allow throw JobStateConflictError', () => {
    it.each([JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled])(
      'cancel of a %s job',
      async (status) => {
        await expectRejectedUnchanged(() => queue.cancel(jobs[status]!.id), JobStateConflictError, {
          jobId: jobs[status]!.id,
          status,
          message: expect.stringContaining(status),
        });
      },
    );

    it.each([JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled])(
      'updateProgress of a %s job',
      async (status) => {
        await expectRejectedUnchanged(
          () => queue.updateProgress(jobs[status]!.id, 50),
          JobStateConflictError,
          { jobId: jobs[status]!.id, status },
        );
      },
    );

    it.each([
      JobStatus.Pending,
      JobStatus.Waiting,
      JobStatus.Claimed,
      JobStatus.Running,
      JobStatus.Completed,
    ])('retry of a %s job', async (status) => {
      await expectRejectedUnchanged(() => queue.retry(jobs[status]!.id), JobStateConflictError, {
        jobId: jobs[status]!.id,
        status,
      });
    });

    it('retry of a failed job whose unique key another unfinished job now holds', async () => {
      const old = await queue.enqueue('keyed', { n: 1 }, { uniqueKey: 'retry-held' });
      await dataSource.query(`UPDATE job_queue.jobs SET status = 'failed' WHERE id = $1`, [old.id]);
      await queue.enqueue('keyed', { n: 2 }, { uniqueKey: 'retry-held' });

      await expectRejectedUnchanged(() => queue.retry(old.id), JobStateConflictError, {
        jobId: old.id,
        status: JobStatus.Failed,
      });
    });
  });
});

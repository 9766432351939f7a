import { InvalidJobInputError, QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { expectNoPayload, rejection } from '../support/payload-privacy';
import { QueryCounter } from '../support/query-counter';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';

/** In every payload below: no error, no property, no cause and no log line may show it. */
const SECRET = 'payload-secret-5e1d';
const ONE_MB = 1024 * 1024;
/** PostgreSQL's lowest timestamptz, 4714-11-24 00:00 UTC BC (ISO year -4713). */
const PG_MIN_MS = Date.UTC(-4713, 10, 24);
/** One character outside the Basic Multilingual Plane: two UTF-16 units, one PostgreSQL character. */
const EMOJI = '\u{1F600}';

/**
 * Input PostgreSQL would refuse is refused by QueueService first: a typed error naming the field,
 * no statement sent, nothing written. Errors about `data` name the path, never the payload.
 */
describe('QueueService: refuse first, and no payload in errors', () => {
  let db: TestDatabase;
  let app: QueueTestingModule;
  let queue: QueueService;
  const counter = new QueryCounter();

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createQueueTestingModule({ url: db.url, typeOrmOptions: { logger: counter } });
    queue = app.queue;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** Row count and the id sequence: any insert, even a rolled back one, would show. */
  const written = async (): Promise<unknown> => {
    const [row] = await app.dataSource.query(
      `SELECT (SELECT count(*)::int FROM job_queue.jobs) AS rows,
              (SELECT md5(coalesce(string_agg(to_jsonb(j)::text, ',' ORDER BY id), '')) FROM job_queue.jobs j)
                AS digest,
              (SELECT last_value FROM job_queue.jobs_id_seq) AS last_id`,
    );
    return row;
  };

  /** `call` throws InvalidJobInputError naming `field`, sends nothing, writes nothing, leaks nothing. */
  async function expectRefused(
    call: () => Promise<unknown>,
    field: string,
  ): Promise<InvalidJobInputError> {
    const before = await written();
    counter.reset();
    const error = await rejection(call);
    const sent = counter.count;
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toMatchObject({ field });
    expect((error as Error).message).toContain(field);
    expect(sent).toBe(0);
    expect(await written()).toEqual(before);
    expectNoPayload(error, SECRET);
    return error as InvalidJobInputError;
  }

  const payload = (extra: Record<string, unknown> = {}) => ({ note: SECRET, ...extra });

  describe('NUL and lone surrogates, in every text column', () => {
    it.each<[string, string]>([
      ['NUL', 'a\u0000b'],
      ['a lone high surrogate', 'a\ud800b'],
      ['a lone high surrogate at the end', 'ab\udbff'],
      ['a lone low surrogate', '\udc00ab'],
      ['two high surrogates', '\ud800\ud800\udc00'],
    ])('refuses %s in the job type', async (_, text) => {
      await expectRefused(() => queue.enqueue(text, payload()), 'type');
    });

    it.each([
      ['NUL', 'k\u0000'],
      ['a lone surrogate', 'k\udc00'],
    ])('refuses %s in the unique key', async (_, text) => {
      await expectRefused(() => queue.enqueue('t', payload(), { uniqueKey: text }), 'uniqueKey');
    });

    it.each([
      ['NUL', 'stage\u0000'],
      ['a lone surrogate', 'stage\ud800'],
    ])('refuses %s in a progress stage', async (_, text) => {
      const job = await queue.enqueue('staged', payload());
      await expectRefused(() => queue.updateProgress(job.id, 10, text), 'stage');
    });

    it.each<[string, unknown, string]>([
      [
        'NUL in a string',
        { items: [{}, {}, {}, { name: `${SECRET}\u0000` }] },
        'data.items[3].name',
      ],
      ['a lone high surrogate in a string', payload({ tail: `${SECRET}\ud800` }), 'data.tail'],
      ['a lone low surrogate in a string', [`\udc00${SECRET}`], 'data[0]'],
      ['a lone surrogate as the whole payload', '\ud83d', 'data'],
      ['NUL in an object key', payload({ deep: { [`${SECRET}\u0000`]: 1 } }), 'data.deep'],
      ['a lone surrogate in a key', payload({ [`\ud800${SECRET}`]: true }), 'data'],
      ['NUL in a key inside an array', { list: [1, { ['\u0000']: SECRET }] }, 'data.list[1]'],
      ['NUL through toJSON', { at: { toJSON: () => `${SECRET}\u0000` } }, 'data.at'],
    ])('refuses %s in data, naming the path and not the text', async (_, data, field) => {
      const error = await expectRefused(() => queue.enqueue('t', data), field);
      expect(error.value).not.toEqual(data);
    });

    it('names the item of an enqueueMany batch, and writes none of it', async () => {
      const good = (n: number) => ({ type: 'batch', data: payload({ n }) });
      await expectRefused(
        () =>
          queue.enqueueMany([
            good(0),
            good(1),
            good(2),
            { type: 'batch', data: payload({ bad: '\ud800' }) },
            good(4),
          ]),
        'jobs[3].data.bad',
      );
      await expectRefused(
        () => queue.enqueueMany([good(0), { ...good(1), uniqueKey: '\u0000' }]),
        'jobs[1].uniqueKey',
      );
    });

    it.each<[string, unknown]>([
      ['a string that spells \\u0000 in six characters', { text: '\\u0000 and \\ud800' }],
      ['a key that spells \\u0000', { ['\\u0000']: 1 }],
      ['well-formed surrogate pairs', { [EMOJI]: `${EMOJI}x${EMOJI}` }],
      ['control characters other than NUL', { text: '\u0001\u001f\u007f' }],
    ])('stores %s exactly', async (_, data) => {
      const job = await queue.enqueue('kept', data);
      expect((await queue.getJob(job.id)).data).toEqual(data);
    });

    it('accepts well-formed pairs in type, key and stage', async () => {
      const job = await queue.enqueue(`type${EMOJI}`, {}, { uniqueKey: `key${EMOJI}` });
      const updated = await queue.updateProgress(job.id, 5, `stage${EMOJI}`);
      expect(updated).toMatchObject({
        jobType: `type${EMOJI}`,
        uniqueKey: `key${EMOJI}`,
        currentStage: `stage${EMOJI}`,
      });
    });
  });

  describe('lengths counted in characters, as PostgreSQL counts them', () => {
    it('takes 255 characters of two UTF-16 units each in type, key and stage', async () => {
      const text = EMOJI.repeat(255);
      const job = await queue.enqueue(text, {}, { uniqueKey: text });
      const updated = await queue.updateProgress(job.id, 1, text);
      expect(updated).toMatchObject({ jobType: text, uniqueKey: text, currentStage: text });
    });

    it('refuses 256 characters in type, key and stage', async () => {
      const text = EMOJI.repeat(256);
      await expectRefused(() => queue.enqueue(text, payload()), 'type');
      await expectRefused(() => queue.enqueue('t', payload(), { uniqueKey: text }), 'uniqueKey');
      const job = await queue.enqueue('long-stage', {});
      await expectRefused(() => queue.updateProgress(job.id, 1, text), 'stage');
    });
  });

  describe("runAt within PostgreSQL's timestamptz range", () => {
    it.each<[string, Date]>([
      ['the lowest JavaScript date (271821 BC)', new Date(-8.64e15)],
      ['one millisecond before 4714-11-24 BC', new Date(PG_MIN_MS - 1)],
    ])('refuses %s', async (_, runAt) => {
      await expectRefused(() => queue.enqueue('t', payload(), { runAt }), 'runAt');
      await expectRefused(
        () =>
          queue.enqueueMany([
            { type: 't', data: payload() },
            { type: 't', data: payload(), runAt },
          ]),
        'jobs[1].runAt',
      );
    });

    it.each<[string, Date]>([
      ['the highest JavaScript date (275760 AD)', new Date(8.64e15)],
      ['year 10000', new Date(Date.UTC(10000, 0, 1))],
      ['4714-11-24 BC, the lowest PostgreSQL takes', new Date(PG_MIN_MS)],
      ['1 BC (ISO year 0)', new Date('0000-06-15T12:30:45.678Z')],
      ['1 AD', new Date('0001-01-01T00:00:00.000Z')],
    ])('stores %s exactly', async (_, runAt) => {
      const exact = runAt.getTime();
      const job = await queue.enqueue('far', {}, { runAt });
      expect(job.runAt.getTime()).toBe(exact);
      const [{ text }] = await app.dataSource.query(
        `SELECT (extract(epoch FROM run_at) * 1000)::bigint::text AS text FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      expect(Number(text)).toBe(exact);
      expect((await queue.getJob(job.id)).runAt.getTime()).toBe(exact);
      await app.dataSource.query(`DELETE FROM job_queue.jobs WHERE id = $1`, [job.id]);
    });

    it('takes the longest delayMs (run_at stays in range)', async () => {
      const job = await queue.enqueue('delayed', {}, { delayMs: 2 ** 31 - 1 });
      expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(2 ** 31 - 1);
    });
  });

  describe('every argument is checked before use', () => {
    it.each<[string, unknown]>([
      ['null', null],
      ['a string', 'urgent'],
    ])('enqueue refuses %s for options', async (_, opts) => {
      await expectRefused(() => queue.enqueue('t', payload(), opts as never), 'options');
    });

    it.each<[string, unknown]>([
      ['a plain object', { query: 'SELECT 1' }],
      ['a string', 'manager'],
    ])('refuses %s for manager', async (_, manager) => {
      await expectRefused(
        () => queue.enqueue('t', payload(), { manager: manager as never }),
        'manager',
      );
      await expectRefused(
        () => queue.enqueueMany([{ type: 't', data: payload() }], { manager: manager as never }),
        'manager',
      );
    });

    it('enqueueMany refuses null options and unknown option keys', async () => {
      await expectRefused(() => queue.enqueueMany([], null as never), 'options');
      await expectRefused(
        () => queue.enqueueMany([{ type: 't', data: payload() }], { priority: 5 } as never),
        'priority',
      );
    });
  });

  describe('data errors name the path, never the payload', () => {
    it.each<[string, () => unknown, string]>([
      [
        'a cycle',
        () => {
          const data: Record<string, unknown> = payload();
          data.self = data;
          return data;
        },
        'data',
      ],
      ['a BigInt', () => payload({ total: 10n }), 'data.total'],
      ['a function', () => payload({ run: () => SECRET }), 'data.run'],
      ['a symbol', () => payload({ s: Symbol(SECRET) }), 'data.s'],
      ['NaN', () => payload({ n: NaN }), 'data.n'],
      [
        'a toJSON that throws',
        () => ({
          toJSON: () => {
            throw new Error(`cannot serialise ${SECRET}`);
          },
        }),
        'data',
      ],
    ])('%s', async (_, data, field) => {
      await expectRefused(() => queue.enqueue('t', data()), field);
    });

    it('over maxPayloadBytes', async () => {
      const error = await expectRefused(
        () => queue.enqueue('t', payload({ blob: 'x'.repeat(ONE_MB) })),
        'data',
      );
      expect(error.message).toContain('maxPayloadBytes');
    });
  });
});

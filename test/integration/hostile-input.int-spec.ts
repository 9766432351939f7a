import { DataSource } from 'typeorm';
import { InvalidJobInputError } from 'nest-pg-job-queue';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { useQueueTestingModule } from '../support/test-app';

// Input crafted to break things: SQL in names, prototype-pollution keys, a schema migrated by
// two processes at once. Each either gets a typed error or is stored as plain data, and no other
// row changes.
describe('hostile input', () => {
  const app = useQueueTestingModule();

  const snapshot = async () =>
    app.dataSource.query(`SELECT id, job_type, status, data FROM job_queue.jobs ORDER BY id`);

  it.each([
    [`it's "quoted"`],
    [`x'; DROP TABLE jobs; --`],
    [`a; SELECT pg_sleep(10); --`],
    [`$1 $$ \\ %s`],
  ])('a job type with quotes or semicolons (%s) is stored as plain text', async (jobType) => {
    const witness = await app.queue.enqueue('witness', { n: 1 });
    const job = await app.queue.enqueue(jobType, { n: 2 });
    expect((await app.queue.getJob(job.id)).jobType).toBe(jobType);
    expect(await app.queue.getJob(witness.id)).toMatchObject({
      jobType: 'witness',
      data: { n: 1 },
    });
    expect((await app.queue.stats({ maxAgeMs: 0 }))[jobType].pending).toBe(1);
  });

  it('a 10 kB job type is refused naming the field, and nothing is written', async () => {
    const before = await snapshot();
    const error = await app.queue.enqueue('t'.repeat(10_240), {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect((error as InvalidJobInputError).field).toBe('type');
    expect(await snapshot()).toEqual(before);
  });

  it('prototype-pollution keys in data are stored as data and pollute nothing', async () => {
    const data = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}',
    ) as Record<string, unknown>;
    const job = await app.queue.enqueue('pollution', data);
    const stored = await app.queue.getJob<Record<string, unknown>>(job.id);
    expect(Object.prototype.hasOwnProperty.call(stored.data, '__proto__')).toBe(true);
    expect(JSON.stringify(stored.data)).toBe(JSON.stringify(data));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('migrations run by two processes at once', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('leave one complete schema: the loser fails and rolls back, a rerun is a no-op', async () => {
    const sources = [0, 1].map(
      () => new DataSource({ type: 'postgres', url: db.url, migrations: jobQueueMigrations }),
    );
    await Promise.all(sources.map((source) => source.initialize()));
    try {
      const outcomes = await Promise.allSettled(sources.map((source) => source.runMigrations()));
      expect(outcomes.some((outcome) => outcome.status === 'fulfilled')).toBe(true);
      // TypeORM takes no lock: the second runner usually collides on a catalog entry and its
      // transaction rolls back whole (seen: duplicate key in pg_type / pg_class).
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected')
          expect(String(outcome.reason)).toMatch(/QueryFailedError/);
      }

      const [{ count }] = await sources[0].query(`SELECT count(*)::int AS count FROM migrations`);
      expect(count).toBe(jobQueueMigrations.length);
      expect(await sources[0].runMigrations()).toEqual([]);
      const [{ claimable }] = await sources[0].query(
        `SELECT count(*)::int AS claimable FROM job_queue.claim_job_batch('w', ARRAY['t'], 1)`,
      );
      expect(claimable).toBe(0);
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }
  });
});

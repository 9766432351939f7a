import { Client, Notification } from 'pg';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { ResolvedConcurrencyLimits } from '../../libs/job-queue/src/options/resolved-options';
import { PENDING_AGAIN_PAYLOAD, queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { storeConcurrencyLimits } from '../../libs/job-queue/src/sql/store-concurrency-limits.query';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const NONE: ResolvedConcurrencyLimits = {
  concurrencyPerKey: null,
  globalConcurrency: null,
  ordered: false,
  rateLimit: null,
};

describe('storeConcurrencyLimits', () => {
  const app = useQueueTestingModule();
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    app.dataSource.query<T[]>(text, params);
  const store = (types: Record<string, Partial<ResolvedConcurrencyLimits>>) =>
    storeConcurrencyLimits(
      app.dataSource,
      DEFAULT_SCHEMA,
      Object.entries(types).map(([jobType, limits]) => ({
        jobType,
        limits: { ...NONE, ...limits },
      })),
    );

  const WAITING_JOB = `INSERT INTO job_queue.jobs (job_type, status, concurrency_key)
                       VALUES ($1, 'waiting', 'k') RETURNING id::text AS id`;

  /** A job of `type` set aside by a claim: `waiting`, with a key. */
  const waitingJob = async (type: string) => (await sql<{ id: string }>(WAITING_JOB, [type]))[0].id;

  const statusOf = async (id: string) =>
    (await sql<{ status: string }>(`SELECT status FROM job_queue.jobs WHERE id = $1`, [id]))[0]
      .status;

  beforeEach(() => sql(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_types`));

  it('returns what it wrote, with what the row held before; a repeat writes and returns nothing', async () => {
    // A row of the type's other settings: a pause and a retention, no limits stored yet.
    await sql(
      `INSERT INTO job_queue.job_types (job_type, paused_at, completed_retention_ms,
                                        retention_updated_at)
       VALUES ('a', now(), 5, now())`,
    );
    const before = await sql(`SELECT * FROM job_queue.job_types WHERE job_type = 'a'`);

    expect(await store({ a: { concurrencyPerKey: 2 }, b: {} })).toEqual([
      {
        jobType: 'a',
        previous: null,
        current: { ...NONE, concurrencyPerKey: 2 },
        releasedWaiting: 0,
      },
      { jobType: 'b', previous: null, current: NONE, releasedWaiting: 0 },
    ]);
    const [after] = await sql(`SELECT * FROM job_queue.job_types WHERE job_type = 'a'`);
    expect(after).toMatchObject({
      paused_at: before[0].paused_at,
      completed_retention_ms: '5',
      retention_updated_at: before[0].retention_updated_at,
      concurrency_per_key: 2,
    });

    expect(await store({ a: { concurrencyPerKey: 2 }, b: {} })).toEqual([]);
    expect(
      await store({ a: { concurrencyPerKey: 1, ordered: true }, b: { globalConcurrency: 4 } }),
    ).toEqual([
      {
        jobType: 'a',
        previous: { ...NONE, concurrencyPerKey: 2 },
        current: { ...NONE, concurrencyPerKey: 1, ordered: true },
        releasedWaiting: 0,
      },
      {
        jobType: 'b',
        previous: NONE,
        current: { ...NONE, globalConcurrency: 4 },
        releasedWaiting: 0,
      },
    ]);
  });

  it('moves the waiting jobs of every type whose per-key limits it changes, and notifies', async () => {
    await store({
      removed: { concurrencyPerKey: 2 },
      raised: { concurrencyPerKey: 2 },
      unchanged: { concurrencyPerKey: 2 },
      rated: { concurrencyPerKey: 2, rateLimit: { max: 8, perMs: 1000, byKey: true } },
    });
    const removed = [await waitingJob('removed'), await waitingJob('removed')];
    const raised = await waitingJob('raised');
    const unchanged = await waitingJob('unchanged');
    const rated = await waitingJob('rated');
    const listener = new Client({ connectionString: app.db.url });
    const heard: Notification[] = [];
    await listener.connect();
    try {
      listener.on('notification', (message) => heard.push(message));
      await listener.query(`LISTEN ${queueSchema(DEFAULT_SCHEMA).insertedChannel}`);

      const changes = await store({
        removed: { globalConcurrency: 3 },
        raised: { concurrencyPerKey: 3 },
        unchanged: { concurrencyPerKey: 2 },
        // The slots go, the rate by key stays: no slot will free up to release these.
        rated: { rateLimit: { max: 8, perMs: 1000, byKey: true } },
      });
      expect(changes.map((c) => [c.jobType, c.releasedWaiting])).toEqual([
        ['raised', 1],
        ['rated', 1],
        ['removed', 2],
      ]);
      for (const id of [...removed, raised, rated]) expect(await statusOf(id)).toBe('pending');
      expect(await statusOf(unchanged)).toBe('waiting');
      await waitFor(() => heard.length > 0, { description: 'the insert channel to be notified' });
      expect(heard.map((message) => message.payload)).toEqual([PENDING_AGAIN_PAYLOAD]);
    } finally {
      await listener.end();
    }
  });

  it('stores rate limits with the others, and a change of one alone is written', async () => {
    const rateLimit = { max: 20, perMs: 1000, byKey: false };
    expect(await store({ r: { rateLimit } })).toEqual([
      { jobType: 'r', previous: null, current: { ...NONE, rateLimit }, releasedWaiting: 0 },
    ]);
    expect(await sql(`SELECT rate_max, rate_per_ms, rate_by_key FROM job_queue.job_types`)).toEqual(
      [{ rate_max: 20, rate_per_ms: 1000, rate_by_key: false }],
    );
    expect(await store({ r: { rateLimit } })).toEqual([]);
    const perKey = { max: 20, perMs: 1000, byKey: true };
    expect(await store({ r: { rateLimit: perKey } })).toEqual([
      {
        jobType: 'r',
        previous: { ...NONE, rateLimit },
        current: { ...NONE, rateLimit: perKey },
        releasedWaiting: 0,
      },
    ]);
  });

  it('moves the waiting jobs of a type whose per-key rate limit it removes', async () => {
    await store({ r: { rateLimit: { max: 5, perMs: 1000, byKey: true } } });
    const id = await waitingJob('r');
    const [change] = await store({ r: { rateLimit: { max: 5, perMs: 1000, byKey: false } } });
    expect(change).toMatchObject({ jobType: 'r', releasedWaiting: 1 });
    expect(await statusOf(id)).toBe('pending');
  });

  it('moves the jobs a claim still in flight with the old limit sets aside, once it commits', async () => {
    await store({ t: { concurrencyPerKey: 1 } });
    const schema = queueSchema(DEFAULT_SCHEMA);
    // A claim of the limited type: it holds the type's lock and sets a job aside, uncommitted.
    const claim = new Client({ connectionString: app.db.url });
    await claim.connect();
    try {
      await claim.query('BEGIN');
      await claim.query(`SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))`, [
        schema.claimLockClass,
        't',
      ]);
      const setAside = (await claim.query<{ id: string }>(WAITING_JOB, ['t'])).rows[0].id;

      const storing = store({ t: {} });
      await waitFor(
        async () =>
          (
            await sql(
              `SELECT 1 FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event = 'advisory'`,
            )
          ).length > 0,
        { description: 'the store to wait for the claim’s lock' },
      );
      await claim.query('COMMIT');

      const [change] = await storing;
      expect(change).toMatchObject({ jobType: 't', releasedWaiting: 1 });
      expect(await statusOf(setAside)).toBe('pending');
    } finally {
      await claim.end();
    }
  });
});

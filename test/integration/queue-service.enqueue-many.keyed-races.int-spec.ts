import { EnqueueManyItem, EnqueueResult, JobQueueDatabaseError } from 'nest-pg-job-queue';
import { Client } from 'pg';
import { useQueueTestingModule } from '../support/test-app';
import { lockWaiters } from '../support/lock-waiters';
import { waitFor } from '../support/wait-for';

const CALLS = 40;
const KEYS = 100;

/** A deterministic shuffle (a seeded LCG): each call names the keys in an order of its own. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Batches that name the same unique keys in different orders, at once: before, they waited on
 * each other's index entries in a cycle and PostgreSQL killed one (40P01, `JobQueueDatabaseError`
 * to the caller, its other jobs lost). Now every batch takes its keys in one order: each call
 * resolves, each key has one holder, and every other item of that key got it back as `skipped`.
 */
describe('QueueService.enqueueMany: batches racing for the same keys', () => {
  const app = useQueueTestingModule({ typeOrmOptions: { extra: { max: CALLS + 2 } } });

  beforeEach(() => app.dataSource.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

  const keys = Array.from({ length: KEYS }, (_, i) => `race-${i}`);
  /** `CALLS` batches at once, each naming every key in an order of its own (`item` makes each). */
  const race = (item: (key: string, call: number) => EnqueueManyItem) =>
    Promise.allSettled(
      Array.from({ length: CALLS }, (_, call) =>
        app.queue.enqueueManyWithOutcome([
          ...shuffled(keys, call + 1).map((key) => item(key, call)),
          // A keyless item rides along: it must land whatever happens to the keyed ones.
          { type: 'race.free', data: { call } },
        ]),
      ),
    );
  const resolved = (settled: Array<PromiseSettledResult<EnqueueResult[]>>): EnqueueResult[][] => {
    const refused = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    expect(refused.map((s) => s.reason as unknown)).toEqual([]);
    return settled.map((s) => (s as PromiseFulfilledResult<EnqueueResult[]>).value);
  };
  const counts = async () =>
    (
      await app.dataSource.query(
        `SELECT count(*) FILTER (WHERE job_type = 'race.keyed')::int AS keyed,
                count(*) FILTER (WHERE job_type = 'race.free')::int AS free
         FROM job_queue.jobs`,
      )
    )[0];

  it('never deadlock inserting, whatever order each names its keys in', async () => {
    const results = resolved(
      await race((uniqueKey, call) => ({ type: 'race.keyed', data: { call }, uniqueKey })),
    );
    const holders = new Map<string, string>();
    for (const result of results) {
      for (const { job, outcome } of result.slice(0, KEYS)) {
        expect(['created', 'skipped']).toContain(outcome);
        const key = job.uniqueKey as string;
        if (!holders.has(key)) holders.set(key, job.id);
        expect(job.id).toBe(holders.get(key));
      }
      expect(result[KEYS].outcome).toBe('created');
    }
    expect(await counts()).toEqual({ keyed: KEYS, free: CALLS });
  });

  it('never deadlock replacing debounced holders, whatever order each names its keys in', async () => {
    const debounced = (uniqueKey: string, call: number): EnqueueManyItem => ({
      type: 'race.keyed',
      data: { call },
      uniqueKey,
      debounceMs: 60_000,
    });
    await app.queue.enqueueMany(keys.map((key) => debounced(key, -1)));
    const results = resolved(await race(debounced));
    for (const result of results) {
      expect(new Set(result.slice(0, KEYS).map((r) => r.outcome))).toEqual(new Set(['replaced']));
    }
    expect(await counts()).toEqual({ keyed: KEYS, free: CALLS });
  });

  it('send a statement that lost a race again when the queue owns its transaction', async () => {
    const keyed = (uniqueKey: string): EnqueueManyItem => ({
      type: 'race.keyed',
      data: {},
      uniqueKey,
      debounceMs: 60_000,
    });
    const [k1, k2] = await app.queue.enqueueMany([keyed('lost-1'), keyed('lost-2')]);
    const other = new Client({ connectionString: app.db.url });
    await other.connect();
    try {
      // Another transaction holds k2, the batch takes k1 and waits for k2, the other asks for
      // k1: a cycle. The other waits 10 s before it looks for one, so the batch's statement
      // (1 s, the default) is the one PostgreSQL kills.
      await other.query(`BEGIN; SET LOCAL deadlock_timeout = '10s'`);
      await other.query(`SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE`, [k2.id]);
      const batch = app.queue.enqueueManyWithOutcome([keyed('lost-2'), keyed('lost-1')]);
      await waitFor(async () => (await lockWaiters(other)) === 1, {
        description: 'the batch to wait for the other transaction',
      });
      await other.query(`SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE`, [k1.id]);
      await other.query('COMMIT');
      expect((await batch).map((r) => [r.job.id, r.outcome])).toEqual([
        [k2.id, 'replaced'],
        [k1.id, 'replaced'],
      ]);
    } finally {
      await other.end();
    }
  });

  it('run a transaction of its own again, whole, when it lost a race (dependsOn)', async () => {
    const a = await app.queue.enqueue('race.dep', {});
    const b = await app.queue.enqueue('race.dep', {});
    const other = new Client({ connectionString: app.db.url });
    await other.connect();
    try {
      // The other transaction holds b; the enqueue locks a, then waits for b; the other asks
      // for a. Its own 10 s deadlock_timeout leaves the enqueue's transaction to be killed.
      await other.query(`BEGIN; SET LOCAL deadlock_timeout = '10s'`);
      await other.query(`SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE`, [b.id]);
      const dependant = app.queue.enqueue('race.merge', {}, { dependsOn: [a.id, b.id] });
      await waitFor(async () => (await lockWaiters(other)) === 1, {
        description: 'the enqueue to wait for the other transaction',
      });
      await other.query(`SELECT 1 FROM job_queue.jobs WHERE id = $1 FOR UPDATE`, [a.id]);
      await other.query('COMMIT');
      expect(await dependant).toMatchObject({ status: 'blocked', unfinishedDependencies: 2 });
    } finally {
      await other.end();
    }
  });

  it('report a lost race inside the caller’s transaction as JobQueueDatabaseError with its code', async () => {
    // Two transactions each hold one key and then ask for the other's: one of them is killed.
    const [a, b] = ['tx-a', 'tx-b'];
    let release!: () => void;
    const bothHold = new Promise<void>((resolve) => (release = resolve));
    let holding = 0;
    const hold = () => {
      holding += 1;
      if (holding === 2) release();
      return bothHold;
    };
    const attempt = (first: string, second: string) =>
      app.dataSource.transaction(async (manager) => {
        await app.queue.enqueue('race.tx', {}, { uniqueKey: first, manager });
        await hold();
        await app.queue.enqueue('race.tx', {}, { uniqueKey: second, manager });
      });
    const settled = await Promise.allSettled([attempt(a, b), attempt(b, a)]);
    const errors = settled
      .filter((s): s is PromiseRejectedResult => s.status === 'rejected')
      .map((s) => s.reason as unknown);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(JobQueueDatabaseError);
    expect((errors[0] as JobQueueDatabaseError).code).toBe('40P01');
  });
});

import { JobOptions } from 'nest-pg-job-queue';
import { ProducedItem, ProducerProcesses } from '../support/producer-processes';
import { useQueueTestingModule } from '../support/test-app';

const PRODUCERS = 3;
const CALLS = 200;

/**
 * Three producer processes enqueue one key at once, 200 calls each, one after another in each
 * process: what the database let through, and what each call was told.
 */
describe('uniqueness across processes', () => {
  const app = useQueueTestingModule();
  let producers: ProducerProcesses;

  beforeAll(async () => {
    producers = new ProducerProcesses(app.db.url, PRODUCERS);
    await producers.ready();
  });
  afterAll(() => producers?.close());

  const rowsOfKey = (key: string): Promise<Array<{ id: string; data: unknown }>> =>
    app.dataSource.query(
      `SELECT id, data FROM job_queue.jobs WHERE unique_key LIKE $1 || '%' ORDER BY id`,
      [key],
    );

  const count = (items: ProducedItem[], outcome: ProducedItem['outcome']): number =>
    items.filter((item) => item.outcome === outcome).length;

  // `batch` 0: enqueueWithOutcome; 2: enqueueManyWithOutcome of two items of the key per call.
  describe.each([
    ['enqueueWithOutcome', 0],
    ['enqueueManyWithOutcome', 2],
  ])('through %s', (api, batch) => {
    const items = CALLS * PRODUCERS * Math.max(batch, 1);

    it('unique: exactly one created; every other item skipped with that job', async () => {
      const key = `unique:${api}`;
      const results = await producers.round(CALLS, batch, { uniqueKey: key });

      const rows = await rowsOfKey(key);
      expect(rows).toHaveLength(1);
      expect(results).toHaveLength(items);
      expect(count(results, 'created')).toBe(1);
      expect(count(results, 'skipped')).toBe(items - 1);
      expect(new Set(results.map((item) => item.id))).toEqual(new Set([rows[0].id]));
    });

    it("debounce: one job, holding the data of a producer's last call, its run_at moved", async () => {
      const key = `debounce:${api}`;
      const options: JobOptions = { uniqueKey: key, debounceMs: 600_000 };
      const results = await producers.round(CALLS, batch, options);

      const rows = await rowsOfKey(key);
      expect(rows).toHaveLength(1);
      expect(count(results, 'created')).toBe(1);
      expect(count(results, 'replaced')).toBe(items - 1);
      // Each process's calls commit in order, so the last committed call is one process's
      // last; its batch's last item, whose data a batch's debounce keeps.
      expect(rows[0].data).toMatchObject({ call: CALLS - 1, item: Math.max(batch, 1) - 1 });
      // Created due 600 s after its insert (run_at - created_at = 600 s exactly); a later call
      // moved it further.
      const [{ movedBy }] = await app.dataSource.query(
        `SELECT extract(epoch FROM run_at - created_at) * 1000 AS "movedBy"
         FROM job_queue.jobs WHERE id = $1`,
        [rows[0].id],
      );
      expect(Number(movedBy)).toBeGreaterThan(600_000);
    });

    it("debounce in callers' transactions: the job holds exactly the last committed call's data", async () => {
      const key = `debounce-tx:${api}`;
      const results = await producers.round(
        CALLS,
        batch,
        { uniqueKey: key, debounceMs: 600_000 },
        { inTransaction: true },
      );

      const [row] = await app.dataSource.query(
        `SELECT id, data, xmin::text AS xmin FROM job_queue.jobs WHERE unique_key = $1`,
        [key],
      );
      expect(count(results, 'created')).toBe(1);
      expect(count(results, 'replaced')).toBe(items - 1);
      // The row's version is the last committed writer's: its transaction id names the call.
      const writers = results.filter((item) => item.txid === row.xmin);
      expect(writers).toHaveLength(Math.max(batch, 1));
      const last = writers[writers.length - 1];
      expect(row.data).toEqual(last.data);
      expect(last.call).toBe(CALLS - 1);
    });

    it('throttle: one job per window; each window created once, every other item skipped', async () => {
      const key = `throttle:${api}`;
      const results = await producers.round(CALLS, batch, { uniqueKey: key, throttleMs: 250 });

      const rows = await rowsOfKey(key);
      const windows = await app.dataSource.query(
        `SELECT split_part(unique_key, E'\\x1f', 2) AS window FROM job_queue.jobs
         WHERE unique_key LIKE $1 || '%'`,
        [key],
      );
      expect(new Set(windows.map((row: { window: string }) => row.window)).size).toBe(rows.length);
      expect(count(results, 'created')).toBe(rows.length);
      expect(count(results, 'skipped')).toBe(items - rows.length);
      // Every item points at one of the jobs, and each job was created by exactly one item.
      const ids = rows.map((row) => row.id);
      expect(results.every((item) => ids.includes(item.id))).toBe(true);
      for (const id of ids) {
        expect(results.filter((item) => item.id === id && item.outcome === 'created')).toHaveLength(
          1,
        );
      }
    });
  });
});

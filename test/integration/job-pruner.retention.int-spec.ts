import { Client } from 'pg';
import { InvalidJobInputError, InvalidJobQueueOptionsError } from 'nest-pg-job-queue';
import { JobPruner } from '../../libs/job-queue/src/maintenance/job-pruner';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { PRUNE_BATCH_SIZE, pruneJobs } from '../../libs/job-queue/src/sql/prune-jobs.query';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import {
  BadRetentionHandlers,
  KEPT_JOB,
  PLAIN_JOB,
  RetentionHandlers,
  SHORT_LIVED_JOB,
} from '../fixtures/retention.handlers';
import { useQueueTestingModule } from '../support/test-app';
import { startWorkerApp } from '../support/worker-test-app';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const YEAR = 365 * 24 * HOUR;

/** This file's module default: completed 1 h, failed 2 h, cancelled 3 h. */
const MODULE_RETENTION = { completedMs: HOUR, failedMs: 2 * HOUR, cancelledMs: 3 * HOUR };

describe('retention: the pruner and prune()', () => {
  const app = useQueueTestingModule({ queueOptions: { retention: MODULE_RETENTION } });
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    app.dataSource.query<T[]>(text, params);

  /** Inserts a job that finished `agoMs` ago (null: no completed_at), returns its id. */
  async function job(type: string, status: string, agoMs: number | null): Promise<string> {
    const [row] = await sql<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, status, completed_at)
       VALUES ($1, $2, CASE WHEN $3::float8 IS NULL THEN NULL
                            ELSE now() - $3::float8 * interval '1 millisecond' END)
       RETURNING id::text AS id`,
      [type, status, agoMs],
    );
    return row.id;
  }

  /** A `job_types` row as a worker stores it (null: keep forever). */
  const storeRetention = (
    type: string,
    completed: number | null,
    failed: number | null,
    cancelled: number | null,
  ) =>
    sql(
      `INSERT INTO job_queue.job_types (job_type, completed_retention_ms, failed_retention_ms,
                                        cancelled_retention_ms, retention_updated_at)
       VALUES ($1, $2, $3, $4, now())`,
      [type, completed, failed, cancelled],
    );

  const remainingIds = async () =>
    (await sql<{ id: string }>(`SELECT j.id::text AS id FROM job_queue.jobs j ORDER BY j.id`)).map(
      (row) => row.id,
    );
  const sorted = (ids: string[]) => [...ids].sort((a, b) => Number(a) - Number(b));
  const pruner = () => app.module.get(JobPruner);

  beforeEach(() => sql(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_types`));

  it('deletes finished jobs older than their type’s retention, and nothing else', async () => {
    const keep: string[] = [];
    const drop: string[] = [];
    // No job_types row: this node's module default (1 h / 2 h / 3 h).
    keep.push(await job('default', 'completed', 30 * MINUTE));
    drop.push(await job('default', 'completed', 90 * MINUTE));
    keep.push(await job('default', 'failed', 90 * MINUTE));
    drop.push(await job('default', 'failed', 150 * MINUTE));
    keep.push(await job('default', 'cancelled', 150 * MINUTE));
    drop.push(await job('default', 'cancelled', 200 * MINUTE));
    // Unfinished jobs stay whatever their completed_at says (edited by hand, say).
    for (const status of ['scheduled', 'pending', 'claimed', 'running']) {
      keep.push(await job('default', status, 10 * YEAR));
    }
    // A finished job without completed_at has no age: it stays.
    keep.push(await job('default', 'completed', null));
    // A row with no stored retention (only paused, say): the module default too.
    await sql(`INSERT INTO job_queue.job_types (job_type, paused_at) VALUES ('paused', now())`);
    keep.push(await job('paused', 'completed', 30 * MINUTE));
    drop.push(await job('paused', 'completed', 90 * MINUTE));
    // A type with its own retention: completed 10 min, failed forever, cancelled 0.
    await storeRetention('own', 10 * MINUTE, null, 0);
    keep.push(await job('own', 'completed', 5 * MINUTE));
    drop.push(await job('own', 'completed', 20 * MINUTE));
    keep.push(await job('own', 'failed', 10 * YEAR));
    drop.push(await job('own', 'cancelled', SECOND));
    // retention: false for a type: everything stays.
    await storeRetention('kept', null, null, null);
    for (const status of ['completed', 'failed', 'cancelled']) {
      keep.push(await job('kept', status, 10 * YEAR));
    }

    expect(await pruner().pruneOnce()).toBe(drop.length);
    expect(await remainingIds()).toEqual(sorted(keep));
    expect(await pruner().pruneOnce()).toBe(0);
  });

  it('deletes at most a batch per statement, and a pass works through a bigger backlog', async () => {
    await sql(
      `INSERT INTO job_queue.jobs (job_type, status, completed_at)
       SELECT 'bulk', 'completed', now() - interval '1 day' - g * interval '1 second'
       FROM generate_series(1, $1::int) AS g`,
      [2 * PRUNE_BATCH_SIZE + 7],
    );
    const young = await job('bulk', 'completed', MINUTE);
    const criteria = {
      defaults: { completedMs: HOUR, failedMs: null, cancelledMs: null },
      olderThanMs: null,
      statuses: null,
      types: null,
    };
    expect(await pruneJobs(app.dataSource, DEFAULT_SCHEMA, null, criteria, 5)).toMatchObject({
      held: true,
      deleted: 5,
      kept: 0,
      read: 5,
      cursor: { jobType: 'bulk', status: 'completed' },
    });
    expect(await pruneJobs(app.dataSource, DEFAULT_SCHEMA, null, criteria)).toMatchObject({
      held: true,
      deleted: PRUNE_BATCH_SIZE,
    });
    expect(await pruner().pruneOnce()).toBe(PRUNE_BATCH_SIZE + 2);
    expect(await remainingIds()).toEqual([young]);
  });

  it('prunes nothing while another session holds the prune lock (one node at a time)', async () => {
    const old = await job('default', 'completed', 10 * HOUR);
    const holder = new Client({ connectionString: app.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock($1::bigint)`, [
        queueSchema(DEFAULT_SCHEMA).lockKey('prune'),
      ]);
      expect(await pruner().pruneOnce()).toBe(0);
      expect(await remainingIds()).toEqual([old]);
      // Another schema task's lock (the reaper's) is another key: it does not block pruning.
      await holder.query('ROLLBACK');
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock($1::bigint)`, [
        queueSchema(DEFAULT_SCHEMA).reaperLockKey,
      ]);
      expect(await pruner().pruneOnce()).toBe(1);
      expect(await remainingIds()).toEqual([]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('skips a finished job another transaction holds (a retry in flight), and never deletes it once unfinished', async () => {
    const retried = await job('default', 'failed', 10 * HOUR);
    const other = await job('default', 'failed', 10 * HOUR);
    const holder = new Client({ connectionString: app.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `UPDATE job_queue.jobs SET status = 'pending', completed_at = NULL WHERE id = $1`,
        [retried],
      );
      expect(await app.queue.prune({ olderThanMs: 0 })).toBe(1);
      await holder.query('COMMIT');
      expect(await app.queue.prune({ olderThanMs: 0 })).toBe(0);
      expect(await remainingIds()).toEqual([retried]);
      expect(other).not.toBe(retried);
    } finally {
      await holder.end();
    }
  });

  it('prune(): by retention without olderThanMs, and counts what it deleted', async () => {
    await storeRetention('kept', null, null, null);
    const kept = await job('kept', 'completed', 10 * YEAR);
    const young = await job('default', 'completed', 30 * MINUTE);
    await job('default', 'completed', 90 * MINUTE);
    await job('default', 'failed', 3 * HOUR);
    expect(await app.queue.prune()).toBe(2);
    expect(await remainingIds()).toEqual(sorted([kept, young]));
  });

  it('prune(): olderThanMs, statuses and types narrow what goes; olderThanMs overrides even false', async () => {
    await storeRetention('kept', null, null, null);
    const ids = {
      keptOld: await job('kept', 'completed', 10 * YEAR),
      aCompleted: await job('a', 'completed', 10 * MINUTE),
      aFailed: await job('a', 'failed', 10 * MINUTE),
      aCancelled: await job('a', 'cancelled', 10 * MINUTE),
      aYoung: await job('a', 'completed', SECOND),
      bCompleted: await job('b', 'completed', 10 * MINUTE),
      aPending: await job('a', 'pending', 10 * YEAR),
    };
    expect(
      await app.queue.prune({ olderThanMs: 5 * MINUTE, types: ['a'], statuses: ['failed'] }),
    ).toBe(1);
    expect(await app.queue.prune({ olderThanMs: 5 * MINUTE, types: ['a'] })).toBe(2);
    expect(await app.queue.prune({ olderThanMs: 5 * MINUTE, statuses: ['completed'] })).toBe(2);
    expect(await remainingIds()).toEqual(sorted([ids.aYoung, ids.aPending]));
    expect(await app.queue.prune({ olderThanMs: 0 })).toBe(1);
    expect(await remainingIds()).toEqual([ids.aPending]);
  });

  it('prune(): refuses bad input, naming the field, before sending anything', async () => {
    const cases: Array<[unknown, string]> = [
      [{ statuses: ['pending'] }, 'statuses[0]'],
      [{ statuses: ['completed', 'running'] }, 'statuses[1]'],
      [{ statuses: [] }, 'statuses'],
      [{ statuses: 'completed' }, 'statuses'],
      [{ olderThanMs: -1 }, 'olderThanMs'],
      [{ olderThanMs: 1.5 }, 'olderThanMs'],
      [{ olderThanMs: '60000' }, 'olderThanMs'],
      [{ olderThanMs: 2e15 }, 'olderThanMs'],
      [{ types: [] }, 'types'],
      [{ types: ['ok', ''] }, 'types[1]'],
      [{ types: ['a\u0000b'] }, 'types[0]'],
      [{ olderThan: 5 }, 'olderThan'],
      [null, 'options'],
      ['all', 'options'],
    ];
    const old = await job('default', 'completed', 10 * YEAR);
    for (const [input, field] of cases) {
      const error = await app.queue
        .prune(input as Parameters<typeof app.queue.prune>[0])
        .catch((e: unknown) => e);
      expect({ input, error }).toEqual({ input, error: expect.any(InvalidJobInputError) });
      expect({ input, field: (error as InvalidJobInputError).field }).toEqual({ input, field });
    }
    expect(await remainingIds()).toEqual([old]);
  });

  it('a worker stores its handlers’ retention at start; a node without those handlers prunes by it', async () => {
    const worker = await startWorkerApp({
      url: app.db.url,
      queueOptions: { retention: { completedMs: 2 * HOUR } },
      providers: [RetentionHandlers],
    });
    try {
      const rows = await sql(
        `SELECT job_type, completed_retention_ms::float8 AS completed,
                failed_retention_ms::float8 AS failed, cancelled_retention_ms::float8 AS cancelled,
                retention_updated_at IS NOT NULL AS stored
         FROM job_queue.job_types ORDER BY job_type`,
      );
      expect(rows).toEqual([
        { job_type: KEPT_JOB, completed: null, failed: null, cancelled: null, stored: true },
        // The handler has none of its own: the worker's module retention, over the defaults.
        {
          job_type: PLAIN_JOB,
          completed: 2 * HOUR,
          failed: 7 * 24 * HOUR,
          cancelled: 7 * 24 * HOUR,
          stored: true,
        },
        {
          job_type: SHORT_LIVED_JOB,
          completed: SECOND,
          failed: 7 * 24 * HOUR,
          cancelled: null,
          stored: true,
        },
      ]);
    } finally {
      await worker.close();
    }
    // This file's app has none of those handlers (and a module default of 1 h): it prunes the
    // types by what the worker stored.
    const shortDone = await job(SHORT_LIVED_JOB, 'completed', 5 * SECOND);
    const shortCancelled = await job(SHORT_LIVED_JOB, 'cancelled', 10 * YEAR);
    const kept = await job(KEPT_JOB, 'completed', 10 * YEAR);
    const plain = await job(PLAIN_JOB, 'completed', 90 * MINUTE);
    const other = await job('default', 'completed', 5 * SECOND);
    expect(await pruner().pruneOnce()).toBe(1);
    expect(await remainingIds()).toEqual(sorted([shortCancelled, kept, plain, other]));
    expect(shortDone).toBeDefined();
  });

  it('fails the boot on a bad handler retention, naming the handler, the option and the value', async () => {
    const error = await startWorkerApp({ url: app.db.url, providers: [BadRetentionHandlers] })
      .then(async (worker) => {
        await worker.close();
        return undefined;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect(error).toMatchObject({
      option: "@JobHandler('retention.bad') on BadRetentionHandlers#bad: retention.completedMs",
      value: -1,
    });
  });
});

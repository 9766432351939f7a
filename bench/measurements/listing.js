'use strict';
// QueueService.listJobs on a big table: the first page and a page half-way down (a cursor at
// the middle id), unfiltered, by type, by status, and by type and status; p50/p95 of the call as
// an app makes it (the library's statement through TypeORM, rows mapped to jobs). The table is
// built once per bench run and build of the library (`ours@base` lists on a table of its own
// migrations: one INSERT … SELECT generate_series, then VACUUM ANALYZE), shared by the cases,
// and dropped after the last run. Not in the default set's cost: 10 M rows take
// minutes to build, so `--only=listing` (or a list naming it) runs it; see bench/README.md.
const { nowMs } = require('../lib/timing');
const { percentile } = require('../lib/stats');
const { createDatabase, dropDatabase, withClient } = require('../lib/db');
const { JOBS } = require('../lib/schema');

const LIMIT = 50;
const WARMUP_CALLS = 20;

/**
 * Mostly finished jobs, as a queue that keeps them has: the newest 1% pending, else 95%
 * completed, 3% failed, 1% cancelled (spread through the table); 70% image.process, 20%
 * report_generation, 10% email.send (by a hash of the row number). One row per second of
 * created_at. $1 the row count.
 */
const FILL = `
  INSERT INTO ${JOBS} (job_type, status, data, attempts, run_token, worker_id, created_at,
                       updated_at, run_at, started_at, completed_at, result, last_error, progress)
  SELECT s.job_type, s.status, jsonb_build_object('i', g),
         CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
         CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
         CASE WHEN s.status IN ('completed', 'failed') THEN 'bench-1:42:abc' END,
         s.at, s.at, s.at,
         CASE WHEN s.status IN ('completed', 'failed') THEN s.at END,
         CASE WHEN s.status <> 'pending' THEN s.at END,
         CASE WHEN s.status = 'completed' THEN jsonb_build_object('ok', true) END,
         CASE WHEN s.status = 'failed' THEN 'Error: upstream answered 503' END,
         CASE WHEN s.status = 'completed' THEN 100 ELSE 0 END
  FROM generate_series(1, $1::bigint) AS g
  CROSS JOIN LATERAL (
    SELECT CASE WHEN abs(hashint8(g)::bigint) % 100 < 70 THEN 'image.process'
                WHEN abs(hashint8(g)::bigint) % 100 < 90 THEN 'report_generation'
                ELSE 'email.send' END AS job_type,
           CASE WHEN g > $1::bigint - $1::bigint / 100 THEN 'pending'
                WHEN g % 100 < 3 THEN 'failed'
                WHEN g % 100 = 3 THEN 'cancelled'
                ELSE 'completed' END AS status,
           now() - ($1::bigint - g) * interval '1 second' AS at
  ) AS s`;

/** The shared tables by peer: built at the first case's first run, dropped by `teardown`. */
const tables = new Map();

function sharedTable(cfg, peer) {
  let table = tables.get(peer.name);
  if (table) return table;
  table = (async () => {
    const db = await createDatabase(`listing_${peer.name}`);
    try {
      const { queue, NestFactory, common, TypeOrmModule } = load(peer);
      // The library's migrations, as the ours adapter's prepare runs them.
      await bootAndClose(db.url, { queue, NestFactory, common, TypeOrmModule });
      await withClient(db.url, async (client) => {
        const t0 = nowMs();
        await client.query(FILL, [cfg.listingRows]);
        const filled = nowMs() - t0;
        await client.query(`VACUUM ANALYZE ${JOBS}`);
        const { rows } = await client.query(
          `SELECT max(id)::text AS max, pg_size_pretty(pg_total_relation_size('${JOBS}')) AS size
           FROM ${JOBS}`,
        );
        console.log(
          `  listing table: ${cfg.listingRows.toLocaleString('en')} jobs (${rows[0].size}), ` +
            `filled in ${(filled / 1000).toFixed(1)} s, analysed in ${((nowMs() - t0 - filled) / 1000).toFixed(1)} s`,
        );
        db.middleId = (BigInt(rows[0].max) / 2n).toString();
        db.size = rows[0].size;
      });
      return db;
    } catch (error) {
      await dropDatabase(db.name).catch(() => undefined);
      throw error;
    }
  })();
  tables.set(peer.name, table);
  return table;
}

/** The peer's build of the library (today's or the baseline's) and the app's packages. */
const load = (peer) => peer.adapter.load(peer.variant.queueDir);

/** An enqueue-only app on `url` (migrationsRun when asked): what lists jobs in an app. */
async function bootApp(url, { queue, NestFactory, common, TypeOrmModule }, migrationsRun) {
  class ListingModule {}
  common.Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        migrations: queue.jobQueueMigrations,
        migrationsRun,
      }),
      queue.JobQueueModule.forRoot({ worker: false }),
    ],
  })(ListingModule);
  const app = await NestFactory.createApplicationContext(ListingModule, {
    logger: ['error', 'warn'],
  });
  return { app, queueService: app.get(queue.QueueService) };
}

async function bootAndClose(url, modules) {
  const { app } = await bootApp(url, modules, true);
  await app.close();
}

/** The cursor listJobs gives after the job `id` (base64url of {"id":"<id>"}). */
const cursorAfter = (id) => Buffer.from(JSON.stringify({ id })).toString('base64url');

async function timeCalls(queueService, query, calls) {
  const times = [];
  let listed = 0;
  for (let i = 0; i < WARMUP_CALLS + calls; i++) {
    const t0 = nowMs();
    const page = await queueService.listJobs(query);
    const ms = nowMs() - t0;
    listed = page.jobs.length;
    if (i >= WARMUP_CALLS) times.push(ms);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), listed };
}

const CASES = [
  ['unfiltered', 'no filter', {}],
  ['type', 'type=report_generation (20%)', { type: 'report_generation' }],
  ['status', 'status=failed (3%)', { status: 'failed' }],
  ['type-status', 'type=email.send&status=failed (0.3%)', { type: 'email.send', status: 'failed' }],
].map(([key, label, filter]) => ({
  key,
  label,
  async run({ peer, cfg }) {
    const db = await sharedTable(cfg, peer);
    const { app, queueService } = await bootApp(db.url, load(peer), false);
    try {
      const first = await timeCalls(queueService, { ...filter, limit: LIMIT }, cfg.listingCalls);
      const deep = await timeCalls(
        queueService,
        { ...filter, limit: LIMIT, cursor: cursorAfter(db.middleId) },
        cfg.listingCalls,
      );
      if (first.listed !== LIMIT || deep.listed !== LIMIT) {
        throw new Error(`listed ${first.listed} and ${deep.listed} jobs, not ${LIMIT} each`);
      }
      return {
        'first p50 ms': first.p50,
        'first p95 ms': first.p95,
        'deep p50 ms': deep.p50,
        'deep p95 ms': deep.p95,
        extra: { rows: cfg.listingRows, tableSize: db.size, cursorBelowId: db.middleId },
      };
    } finally {
      await app.close();
    }
  },
}));

module.exports = {
  name: 'listing',
  title: (cfg) =>
    `QueueService.listJobs, ${LIMIT} a page, on ${cfg.listingRows.toLocaleString('en')} jobs: ` +
    `first page and a page below the middle id, ${cfg.listingCalls} calls each (ms; goal p95 <= 50)`,
  metrics: ['first p50 ms', 'first p95 ms', 'deep p50 ms', 'deep p95 ms'],
  only: ['ours'],
  // Only when asked for by name: building the table takes minutes.
  onlyWhenNamed: true,
  cases: CASES,
  async teardown() {
    const built = [...tables.values()];
    tables.clear();
    for (const table of built) {
      const db = await table.catch(() => undefined);
      if (db) await dropDatabase(db.name);
    }
  },
};

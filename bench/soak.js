'use strict';
// npm run bench -- --soak [--soak-minutes=10] [--soak-rate=5000]: our queue under steady load.
// A producer enqueues at a fixed rate (enqueueMany every 100 ms, catching up when late) while
// worker processes run the jobs, for N minutes with retention at 1 minute, then N minutes more
// on a fresh database with retention off. Each minute: the jobs table's sizes, its live and dead
// rows, the median time of a claim of 10 from the heads and of one after the workers' cursor,
// and p99 wait (run_at -> started_at) of the jobs started that minute. Not part of the
// measurements (nor of CI): it takes 2N minutes and more.
const os = require('node:os');
const { Client } = require('pg');
const { withFreshDatabase } = require('./lib/db');
const { WorkerGroup } = require('./lib/children');
const { nowMs, sleep } = require('./lib/timing');
const { median, percentile } = require('./lib/stats');
const { JOBS, claimStatement, claimAfterStatement } = require('./lib/schema');
const ours = require('./adapters/ours');
const { VACUUM_CHECK_MS, autovacuumIsOn, standInVacuum } = require('./lib/stand-in-vacuum');

const WORKERS = 2;
const CONCURRENCY = 50;
const TICK_MS = 100;
/** Most jobs per enqueueMany (below the library's maxBatchSize). */
const MAX_BATCH = 5_000;
const CLAIM_PROBE_EVERY_MS = 2_000;
const RETENTION_MS = 60_000;
/** The pruner's period: shorter than its default (60 s), so the 1-minute retention shows. */
const RETENTION_INTERVAL_MS = 10_000;
const MB = 1024 * 1024;
const PHASES = [
  {
    key: 'retention',
    label: `retention 1 min (pruned every ${RETENTION_INTERVAL_MS / 1000} s)`,
    retention: { completedMs: RETENTION_MS, failedMs: RETENTION_MS, cancelledMs: RETENTION_MS },
  },
  { key: 'off', label: 'retention off', retention: false },
];

/**
 * Where the workers' claims resume: the last job claimed so far (the highest id that has left
 * `pending`; the few newer ones still waiting are read past through the primary key).
 */
const LATEST_CLAIMED = `SELECT priority, created_at::text AS created_at, id FROM ${JOBS}
  WHERE status <> 'pending' ORDER BY id DESC LIMIT 1`;

/**
 * Times of one claim of 10, each in a transaction rolled back (ms): `fromHead` as a claim from the
 * heads reads (every dead entry of the jobs claimed since the last vacuum), `afterCursor` as a
 * worker's claim between those reads: resuming after the last job the workers claimed.
 */
async function timeClaims(client) {
  const times = {};
  const [cursor] = (await client.query(LATEST_CLAIMED)).rows;
  for (const [name, sql, params] of [
    ['fromHead', claimStatement, ['soak-probe', [ours.JOB_TYPE], 10]],
    cursor && [
      'afterCursor',
      claimAfterStatement,
      ['soak-probe', [ours.JOB_TYPE], 10, cursor.priority, cursor.created_at, cursor.id],
    ],
  ].filter(Boolean)) {
    await client.query('BEGIN');
    try {
      const start = nowMs();
      await client.query(sql, params);
      times[name] = nowMs() - start;
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return times;
}

async function tableStats(client) {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query(
    `SELECT pg_total_relation_size(c.oid)::float8 AS total, pg_relation_size(c.oid)::float8 AS heap,
            pg_indexes_size(c.oid)::float8 AS indexes, s.n_live_tup::float8 AS live,
            s.n_dead_tup::float8 AS dead,
            (s.autovacuum_count + s.vacuum_count)::float8 AS vacuums
       FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.oid = '${JOBS}'::regclass`,
  );
  const [{ waiting }] = (
    await client.query(
      `SELECT count(*)::float8 AS waiting FROM ${JOBS} WHERE status IN ('pending', 'scheduled')`,
    )
  ).rows;
  return { ...rows[0], waiting };
}

const COLUMNS = [
  ['min', (r) => r.minute],
  ['enqueued/s', (r) => Math.round(r.enqueued / 60)],
  ['started/s', (r) => Math.round(r.started / 60)],
  ['table MB', (r) => (r.total / MB).toFixed(1)],
  ['heap MB', (r) => (r.heap / MB).toFixed(1)],
  ['indexes MB', (r) => (r.indexes / MB).toFixed(1)],
  ['live rows', (r) => Math.round(r.live)],
  ['dead rows', (r) => Math.round(r.dead)],
  ['vacuums', (r) => r.vacuums],
  ['waiting', (r) => r.waiting],
  ['claim 10 after cursor ms (median)', (r) => fixed(r.claimAfterCursorMs)],
  ['claim 10 from head ms (median)', (r) => fixed(r.claimFromHeadMs)],
  ['p99 wait ms', (r) => (Number.isFinite(r.p99WaitMs) ? Math.round(r.p99WaitMs) : '-')],
];

function fixed(ms) {
  return Number.isFinite(ms) ? ms.toFixed(2) : '-';
}

function markdown(rows) {
  const head = `| ${COLUMNS.map(([name]) => name).join(' | ')} |`;
  const rule = `| ${COLUMNS.map(() => '---').join(' | ')} |`;
  const body = rows.map((row) => `| ${COLUMNS.map(([, get]) => get(row)).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

async function runPhase(phase, { minutes, rate }) {
  return withFreshDatabase(`soak_${phase.key}`, async (db) => {
    await ours.prepare(db);
    const group = new WorkerGroup({
      adapter: 'ours',
      variant: 'ours',
      db,
      count: WORKERS,
      rssAt: [],
      maxLifetimeMs: minutes * 60_000 + 300_000,
      moduleOptions: {
        worker: { concurrency: CONCURRENCY },
        retention: phase.retention,
        retentionIntervalMs: RETENTION_INTERVAL_MS,
      },
      recordWaits: true,
    });
    const probe = new Client({ connectionString: db.url });
    let producer;
    let vacuum;
    try {
      if (!(await autovacuumIsOn(db.url))) {
        vacuum = standInVacuum(db.url, { relations: [JOBS] });
        await vacuum.started;
      }
      await probe.connect();
      producer = await ours.openProducer(db);
      await group.ready(60_000);
      group.go();
      await group.collectWaits(10_000); // start each minute's waits from zero
      console.log(`\n== ${phase.label}: ${rate} jobs/s for ${minutes} min`);
      const rows = [];
      const t0 = nowMs();
      let enqueued = 0;
      let nextProbe = t0;
      for (let minute = 1; minute <= minutes; minute++) {
        const end = t0 + minute * 60_000;
        const enqueuedBefore = enqueued;
        const claimTimes = { fromHead: [], afterCursor: [] };
        while (nowMs() < end) {
          const due = Math.floor(((nowMs() - t0) / 1000) * rate) - enqueued;
          if (due > 0) {
            const n = Math.min(due, MAX_BATCH);
            await producer.addBulk(Array.from({ length: n }, (_, i) => ({ i: enqueued + i })));
            enqueued += n;
          }
          if (nowMs() >= nextProbe) {
            const times = await timeClaims(probe);
            for (const [name, ms] of Object.entries(times)) claimTimes[name].push(ms);
            nextProbe += CLAIM_PROBE_EVERY_MS;
          }
          await sleep(Math.max(0, Math.min(TICK_MS, end - nowMs())));
        }
        const waits = await group.collectWaits(30_000);
        const row = {
          minute,
          enqueued: enqueued - enqueuedBefore,
          started: waits.length,
          ...(await tableStats(probe)),
          claimFromHeadMs: median(claimTimes.fromHead),
          claimAfterCursorMs: median(claimTimes.afterCursor),
          p99WaitMs: percentile(waits, 99),
        };
        rows.push(row);
        console.log(
          `  ${COLUMNS.map(([name, get]) => `${name} ${get(row)}`).join(', ')}` +
            `  [load ${os.loadavg()[0].toFixed(2)}]`,
        );
      }
      return rows;
    } finally {
      await vacuum?.stop();
      await producer?.close().catch(() => undefined);
      await group.stop(30_000);
      await probe.end().catch(() => undefined);
    }
  });
}

async function runSoak({ minutes, rate }) {
  const { databaseUrl } = require('./lib/env');
  if (!(await autovacuumIsOn(databaseUrl('postgres')))) {
    console.log(
      `autovacuum is off on this server: the soak VACUUMs ${JOBS} itself when autovacuum would ` +
        `have (dead rows past 1000 + 5% of live rows, checked every ${VACUUM_CHECK_MS / 1000} s)`,
    );
  }
  console.log(
    `soak: ${rate} jobs/s, ${WORKERS} worker processes of concurrency ${CONCURRENCY}, ` +
      `${minutes} min per phase; load average at start ${os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}`,
  );
  const results = [];
  for (const phase of PHASES)
    results.push({ phase, rows: await runPhase(phase, { minutes, rate }) });
  for (const { phase, rows } of results) {
    console.log(`\n### ${phase.label}, ${rate} jobs/s\n\n${markdown(rows)}`);
  }
  console.log(
    `\nload average at end ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  return results;
}

module.exports = { runSoak };

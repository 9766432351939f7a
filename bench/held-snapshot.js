'use strict';
// npm run bench -- --held-snapshot [--warm-seconds=60] [--held-seconds=60] [--after-seconds=20]
// [--held-rate=2000] [--only=ours,graphile-batched]: steady load while a snapshot is held.
//
// A long report query, pg_dump or a forgotten psql session holds a snapshot; while it does,
// PostgreSQL removes no row that died after it began, and a claim may walk the dead entries at
// the head of its index. Per variant, on a fresh database: a producer in the bench process
// enqueues no-op jobs at a steady rate (addBulk every 100 ms, catching up when late), and a
// probe job every 100 ms; ONE worker process runs them. From `warm` s to `warm + held` s another
// connection holds a REPEATABLE READ transaction with an xid, then rolls it back; the load runs
// on for `after` s. Each probe's enqueue -> handler start latency (wall clock of the machine,
// producer and worker in two processes) is reported per 10-second window by enqueue time.
// Not part of the measurements (nor of CI).
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { WorkerGroup } = require('./lib/children');
const { withPeerDatabase } = require('./lib/workload');
const { allPeers } = require('./lib/peers');
const { sleep } = require('./lib/timing');
const { percentile } = require('./lib/stats');
const { JOBS } = require('./lib/schema');
const { databaseUrl } = require('./lib/env');
const { VACUUM_CHECK_MS, autovacuumIsOn, standInVacuum } = require('./lib/stand-in-vacuum');

const WINDOW_MS = 10_000;
const TICK_MS = 100;
const PROBE_EVERY_MS = 100;
/** Probe enqueues in flight at most (they are not awaited one by one, so a slow one does not
 * delay the next); past it the probe loop waits. */
const MAX_PROBES_IN_FLIGHT = 100;
/** Most jobs per addBulk (below our library's maxBatchSize and the peers' limits). */
const MAX_BATCH = 5_000;
/** After the load stops: how long the probes still waiting may take to start. */
const DRAIN_MS = 60_000;

/** The variants, by peer name, and a table of each peer's the held transaction reads. */
const VARIANTS = [
  { name: 'ours', table: JOBS },
  { name: 'ours-prefetch', table: JOBS },
  { name: 'ours-c200', table: JOBS },
  { name: 'graphile-batched', table: 'graphile_worker._private_jobs' },
  { name: 'pg-boss-b5000', table: 'pgboss.job' },
];

const clock = () => performance.timeOrigin + performance.now();
const loadavg = () => os.loadavg().map((v) => v.toFixed(2));

async function connect(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Dead and live rows of all the database's tables (pg_stat_user_tables), vacuums so far. */
async function tableStats(client) {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query(
    `SELECT coalesce(sum(n_dead_tup), 0)::float8 AS dead, coalesce(sum(n_live_tup), 0)::float8 AS live,
            coalesce(sum(vacuum_count + autovacuum_count), 0)::float8 AS vacuums
       FROM pg_stat_user_tables`,
  );
  return rows[0];
}

function phaseOf(windowIndex, { warmSeconds, heldSeconds }) {
  const from = windowIndex * 10;
  if (from < warmSeconds) return 'before';
  if (from < warmSeconds + heldSeconds) return 'hold';
  return 'after';
}

async function runVariant(peer, spec, opts) {
  const { warmSeconds, heldSeconds, afterSeconds, rate, autovacuumOn } = opts;
  const totalMs = (warmSeconds + heldSeconds + afterSeconds) * 1000;
  const windows = totalMs / WINDOW_MS;
  return withPeerDatabase(peer, 'held', async (db) => {
    const group = new WorkerGroup({
      adapter: peer.file,
      variant: peer.variant.name,
      db,
      count: 1,
      rssAt: [],
      maxLifetimeMs: totalMs + DRAIN_MS + 180_000,
      recordProbes: true,
    });
    let producer;
    let vacuum;
    let holder;
    let stats;
    let aborted = false;
    try {
      if (!autovacuumOn) {
        vacuum = standInVacuum(db.url);
        await vacuum.started;
      }
      holder = await connect(db.url);
      stats = await connect(db.url);
      producer = await peer.adapter.openProducer(db, peer.variant);
      await group.ready(60_000);
      group.go();
      const t0 = clock();
      const endAt = t0 + totalMs;
      const running = () => !aborted && clock() < endAt;
      const sleepUntil = (at) => sleep(Math.max(0, Math.min(at, endAt) - clock()));
      let enqueued = 0;
      const probeTimes = [];
      let probeErrors = 0;
      const hold = {};

      const produce = async () => {
        while (running()) {
          const due = Math.floor(((clock() - t0) / 1000) * rate) - enqueued;
          if (due > 0) {
            const n = Math.min(due, MAX_BATCH);
            await producer.addBulk(Array.from({ length: n }, (_, i) => ({ i: enqueued + i })));
            enqueued += n;
          }
          await sleep(Math.max(0, Math.min(TICK_MS, endAt - clock())));
        }
      };

      const inFlight = new Set();
      const probe = async () => {
        for (let k = 0; ; k++) {
          const at = t0 + k * PROBE_EVERY_MS;
          if (at >= endAt) break;
          await sleepUntil(at);
          if (!running()) break;
          while (inFlight.size >= MAX_PROBES_IN_FLIGHT && running()) {
            await Promise.race(inFlight);
          }
          const t = clock();
          probeTimes.push(t);
          const p = producer
            .add({ probe: 1, t, k })
            .catch(() => {
              probeErrors++;
            })
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await Promise.all(inFlight);
      };

      const holdSnapshot = async () => {
        await sleepUntil(t0 + warmSeconds * 1000);
        if (!running()) return;
        await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        hold.xid = (await holder.query('SELECT txid_current() AS xid')).rows[0].xid;
        await holder.query(`SELECT 1 FROM ${spec.table} LIMIT 1`);
        hold.fromS = (clock() - t0) / 1000;
        // What the server sees of the holder: its xid and the xmin that holds back the horizon.
        const { rows } = await stats.query(
          'SELECT backend_xid::text AS xid, backend_xmin::text AS xmin FROM pg_stat_activity WHERE pid = $1',
          [holder.processID],
        );
        hold.seen = rows[0];
        await sleepUntil(t0 + (warmSeconds + heldSeconds) * 1000);
        await holder.query('ROLLBACK');
        hold.toS = (clock() - t0) / 1000;
      };

      const rows = [];
      const sample = async () => {
        let handledBefore = 0;
        let enqueuedBefore = 0;
        for (let w = 0; w < windows; w++) {
          await sleepUntil(t0 + (w + 1) * WINDOW_MS);
          if (aborted) return;
          const handled = group.handled();
          const row = {
            window: `${w * 10}-${(w + 1) * 10}`,
            phase: phaseOf(w, opts),
            enqueuedPerS: Math.round((enqueued - enqueuedBefore) / 10),
            startedPerS: Math.round((handled - handledBefore) / 10),
            ...(await tableStats(stats)),
            load: os.loadavg()[0],
          };
          handledBefore = handled;
          enqueuedBefore = enqueued;
          rows.push(row);
          console.log(
            `  ${row.window} s (${row.phase}): enqueued/s ${row.enqueuedPerS}, started/s ${row.startedPerS}, ` +
              `dead rows ${Math.round(row.dead)}, live rows ${Math.round(row.live)}, vacuums ${row.vacuums}` +
              `  [load ${row.load.toFixed(2)}]`,
          );
        }
      };

      const loops = [produce(), probe(), holdSnapshot(), sample()].map((p) =>
        p.catch((error) => {
          aborted = true;
          throw error;
        }),
      );
      const settled = await Promise.allSettled(loops);
      const failed = settled.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;

      // The probes still waiting may start during the drain (the load has stopped).
      const started = [];
      const drainEnd = clock() + DRAIN_MS;
      for (;;) {
        started.push(...(await group.collectProbes(10_000)));
        if (started.length >= probeTimes.length - probeErrors || clock() >= drainEnd) break;
        await sleep(250);
      }
      const latencyByT = new Map(started.map(([t, at]) => [t, at - t]));
      for (const [w, row] of rows.entries()) {
        const from = t0 + w * WINDOW_MS;
        const inWindow = probeTimes.filter((t) => t >= from && t < from + WINDOW_MS);
        const latencies = inWindow.map((t) => latencyByT.get(t)).filter((v) => v !== undefined);
        Object.assign(row, {
          probes: inWindow.length,
          unstarted: inWindow.length - latencies.length,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          max: percentile(latencies, 100),
        });
      }
      const vacuums = (vacuum?.vacuums() ?? []).map((v) => ({
        ...v,
        atS: Number(((v.at - t0) / 1000).toFixed(1)),
        at: undefined,
      }));
      return { rows, hold, probeErrors, vacuums };
    } finally {
      aborted = true;
      await vacuum?.stop();
      await holder?.query('ROLLBACK').catch(() => undefined);
      await holder?.end().catch(() => undefined);
      await stats?.end().catch(() => undefined);
      await producer?.close().catch(() => undefined);
      await group.stop(30_000);
    }
  });
}

const ms = (v) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(1) : String(Math.round(v))) : '-');

function windowTable(rows) {
  const head =
    '| window s | phase | enqueued/s | started/s | probes | unstarted | p50 ms | p99 ms | max ms | dead rows | vacuums | load |';
  const rule = `|${' --- |'.repeat(12)}`;
  const body = rows.map(
    (r) =>
      `| ${r.window} | ${r.phase} | ${r.enqueuedPerS} | ${r.startedPerS} | ${r.probes} | ${r.unstarted} | ` +
      `${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${Math.round(r.dead)} | ${r.vacuums} | ${r.load.toFixed(2)} |`,
  );
  return [head, rule, ...body].join('\n');
}

/** The three windows that matter: last 10 s before the hold, last 10 s of it, first 10 s after. */
function keyWindows(rows, { warmSeconds, heldSeconds }) {
  const at = (fromS) => rows[fromS / 10];
  return {
    before: at(warmSeconds - 10),
    holdLast: at(warmSeconds + heldSeconds - 10),
    after: at(warmSeconds + heldSeconds),
  };
}

function summaryTable(variants, opts) {
  const { warmSeconds: w, heldSeconds: h } = opts;
  const head =
    `| variant | before ${w - 10}-${w} s p50 / p99 ms | last 10 s of hold ${w + h - 10}-${w + h} s p50 / p99 ms | ` +
    `after release ${w + h}-${w + h + 10} s p50 / p99 ms | p50 ratio hold / before | started/s before / hold / after | unstarted probes |`;
  const rule = `|${' --- |'.repeat(7)}`;
  const body = variants.map((v) => {
    if (v.error) return `| ${v.name} | FAILED: ${v.error.split('\n')[0]} |||||`;
    const { before, holdLast, after } = keyWindows(v.rows, opts);
    const pair = (r) => `${ms(r?.p50)} / ${ms(r?.p99)}`;
    const ratio = holdLast && before ? holdLast.p50 / before.p50 : NaN;
    const unstarted = v.rows.reduce((sum, r) => sum + r.unstarted, 0);
    return (
      `| ${v.name} | ${pair(before)} | ${pair(holdLast)} | ${pair(after)} | ` +
      `${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | ` +
      `${before?.startedPerS} / ${holdLast?.startedPerS} / ${after?.startedPerS} | ${unstarted} |`
    );
  });
  return [head, rule, ...body].join('\n');
}

async function runHeldSnapshot({ only, warmSeconds, heldSeconds, afterSeconds, rate }) {
  const peers = allPeers();
  const names = VARIANTS.map((v) => v.name);
  const unknown = (only ?? []).filter((n) => !names.includes(n));
  if (unknown.length) {
    throw new Error(
      `--only: unknown ${unknown.join(', ')} (--held-snapshot runs ${names.join(', ')})`,
    );
  }
  const selected = VARIANTS.filter((v) => !only?.length || only.includes(v.name));
  const autovacuumOn = await autovacuumIsOn(databaseUrl('postgres'));
  const opts = { warmSeconds, heldSeconds, afterSeconds, rate, autovacuumOn };
  if (!autovacuumOn) {
    console.log(
      `autovacuum is off on this server: the bench VACUUMs (ANALYZE) each table itself when ` +
        `autovacuum would have (dead rows past its threshold + scale factor x live rows, the ` +
        `table's own settings where set), checked every ${VACUUM_CHECK_MS / 1000} s`,
    );
  }
  const results = {
    startedAt: new Date().toISOString(),
    options: opts,
    loadAverageAtStart: loadavg(),
    variants: [],
  };
  console.log(
    `held snapshot: ${rate} jobs/s and a probe every ${PROBE_EVERY_MS} ms through one worker ` +
      `process; snapshot held ${warmSeconds}-${warmSeconds + heldSeconds} s, run to ` +
      `${warmSeconds + heldSeconds + afterSeconds} s; load average at start ${results.loadAverageAtStart.join(' ')}`,
  );
  for (const spec of selected) {
    const peer = peers.find((p) => p.name === spec.name);
    console.log(`\n== ${peer.name}: ${peer.variant.summary}`);
    const entry = { name: peer.name, summary: peer.variant.summary, loadAverageAtStart: loadavg() };
    try {
      Object.assign(entry, await runVariant(peer, spec, opts));
      entry.loadAverageAtEnd = loadavg();
      console.log(
        `  held xid ${entry.hold.xid} from ${entry.hold.fromS?.toFixed(1)} s to ${entry.hold.toS?.toFixed(1)} s` +
          ` (pg_stat_activity: xid ${entry.hold.seen?.xid}, xmin ${entry.hold.seen?.xmin})` +
          `${entry.probeErrors ? `; ${entry.probeErrors} probe enqueues failed` : ''}` +
          `; load average ${entry.loadAverageAtStart.join(' ')} -> ${entry.loadAverageAtEnd.join(' ')}`,
      );
      if (entry.vacuums.length) {
        console.log(
          `  stand-in VACUUMs (s since start: table, ms): ${entry.vacuums
            .map((v) => `${v.atS}: ${v.rel} ${v.ms}`)
            .join('; ')}`,
        );
      }
    } catch (error) {
      entry.error = error.stack ?? String(error);
      console.log(`  FAILED ${entry.error}`);
    }
    results.variants.push(entry);
  }
  for (const v of results.variants) {
    if (!v.error) console.log(`\n### ${v.name}: ${v.summary}\n\n${windowTable(v.rows)}`);
  }
  results.loadAverageAtEnd = loadavg();
  results.finishedAt = new Date().toISOString();
  console.log(
    `\n### Probe latency, enqueue -> handler start (${rate} jobs/s, one worker process` +
      `${autovacuumOn ? '' : '; autovacuum off, stand-in VACUUM'})\n\n${summaryTable(results.variants, opts)}`,
  );
  console.log(
    `\nload average at start ${results.loadAverageAtStart.join(' ')}, at end ${results.loadAverageAtEnd.join(' ')}`,
  );
  return results;
}

module.exports = { runHeldSnapshot };

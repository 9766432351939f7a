'use strict';
// Processing pre-enqueued no-op jobs with N worker processes: the clock runs from the start
// signal (all workers booted) to the moment the peer's own count of completed jobs reaches the
// total. pg_stat_database of the fresh database gives transactions and rows written per job.
const { nowMs, waitFor, sleep } = require('./timing');
const { databaseCounters, withClient } = require('./db');
const { WorkerGroup } = require('./children');
const { withPeerDatabase, addInChunks } = require('./workload');
const { processCpuMs } = require('./process-cpu');

async function runProcessing({ peer, cfg, workers, total, rssAt, tag }) {
  return withPeerDatabase(peer, tag, async (db) => {
    const producer = await peer.adapter.openProducer(db, peer.variant);
    try {
      await addInChunks(producer, total, cfg.bulkChunk);
    } finally {
      await producer.close();
    }
    // A backlog this size would have been analyzed by autovacuum within about a minute; doing it
    // now keeps the run from depending on when autovacuum happens to come by (--no-analyze: cold).
    if (cfg.analyze && !peer.variant.noDatabase)
      await withClient(db.url, (client) => client.query('ANALYZE'));
    const counter = await peer.adapter.openCounter(db, peer.variant);
    let counterCalls = 0;
    const countDone = () => {
      counterCalls++;
      return counter.count(total);
    };
    let release = peer.adapter.holdWorkers ? await peer.adapter.holdWorkers(db) : undefined;
    let group;
    try {
      group = new WorkerGroup({
        adapter: peer.file,
        variant: peer.variant.name,
        db,
        count: workers,
        rssAt,
        maxLifetimeMs: cfg.runTimeoutMs + 120_000,
        cpuProfDir: cfg.cpuProfDir,
        allocProfDir: cfg.allocProfDir,
      });
      await group.ready(cfg.bootTimeoutMs);
      const before = await databaseCounters(db.url, db.name);
      const pgCpuBefore = await backendCpu(db);
      const t0 = nowMs();
      if (release) await release();
      release = undefined;
      group.go();
      const what = `${total} jobs done by ${peer.name}`;
      await waitFor(() => group.handled() >= total, {
        intervalMs: 20,
        timeoutMs: cfg.runTimeoutMs,
        what,
      });
      const remaining = Math.max(5_000, cfg.runTimeoutMs - (nowMs() - t0));
      await waitFor(async () => (await countDone()) >= total, {
        intervalMs: 20,
        timeoutMs: remaining,
        what,
      });
      const seconds = (nowMs() - t0) / 1000;
      const workerCpuMs = (await group.cpuSample(5_000)).reduce((a, b) => a + b, 0);
      const pgCpuMs = peer.variant.noDatabase
        ? undefined
        : cpuSince(pgCpuBefore, await backendCpu(db));
      const children = await group.stop(cfg.stopTimeoutMs);
      group = undefined;
      await sleep(200);
      const after = await databaseCounters(db.url, db.name);
      // Our own reads (the completion polls and the two counter reads) are not the peer's work.
      const xacts = after.xacts - before.xacts - counterCalls - 2;
      const written =
        after.inserted +
        after.updated +
        after.deleted -
        (before.inserted + before.updated + before.deleted);
      return {
        metrics: { 'jobs/s': total / seconds },
        extra: {
          seconds,
          'worker CPU µs/job': (workerCpuMs * 1000) / total,
          ...(pgCpuMs === undefined ? {} : { 'pg CPU µs/job': (pgCpuMs * 1000) / total }),
          ...(peer.variant.noDatabase
            ? {}
            : { 'xacts/job': xacts / total, 'rows written/job': written / total }),
          queries: mergeCounts(children.map((c) => c.final && c.final.queries)),
          handledPerWorker: children.map((c) => c.final && c.final.handled),
          readyRss: children.map((c) => c.readyRss),
          rssAt: children.map((c) => c.rssAt),
          heapUsedAt: children.map((c) => c.heapAt),
          finalRss: children.map((c) => (c.final ? c.final.rss : c.lastRss)),
        },
      };
    } finally {
      if (group) await group.stop(cfg.stopTimeoutMs);
      if (release) await release().catch(() => undefined);
      await counter.close();
    }
  });
}

/**
 * CPU time (ms) of each PostgreSQL backend connected to the bench database, read from /proc:
 * the server runs on this machine. Backends that connect during the run count from zero.
 */
async function backendCpu(db) {
  const { rows } = await withClient(db.url, (client) =>
    client.query(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    ),
  );
  const cpu = new Map();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // gone, or not on this machine
    }
  }
  return cpu;
}

function cpuSince(before, after) {
  let ms = 0;
  for (const [pid, value] of after) ms += value - (before.get(pid) ?? 0);
  return ms;
}

function mergeCounts(list) {
  const present = list.filter(Boolean);
  if (present.length === 0) return undefined;
  const total = {};
  for (const counts of present) {
    for (const [kind, { count, ms }] of Object.entries(counts)) {
      const entry = (total[kind] ??= { count: 0, ms: 0 });
      entry.count += count;
      entry.ms += ms;
    }
  }
  for (const entry of Object.values(total))
    entry.msEach = Number((entry.ms / entry.count).toFixed(3));
  return total;
}

module.exports = { runProcessing };

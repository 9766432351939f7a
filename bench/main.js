'use strict';
// npm run bench [-- --quick] [-- --only=a,b] [-- --reps=N] [-- --cpu-prof] [-- --baseline=X]
// Runs bench/run.sh's build first; see bench/README.md.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FULL, QUICK, parseArgs } = require('./lib/config');
const { allPeers } = require('./lib/peers');
const { summarize } = require('./lib/stats');
const { render, fmt } = require('./lib/report');
const { dropLeftovers, withClient } = require('./lib/db');
const { serverUrl, redisUrl } = require('./lib/env');
const { packageVersion } = require('./lib/packages');
const baseline = require('./lib/baseline');

const MEASUREMENTS = [
  require('./measurements/enqueue'),
  require('./measurements/bulk'),
  ...require('./measurements/process'),
  require('./measurements/latency'),
  require('./measurements/cancel'),
  require('./measurements/delayed'),
  require('./measurements/claim'),
  require('./measurements/rss'),
  require('./measurements/listing'),
];

const HELP = `npm run bench -- [options]
  --quick            ~1 minute smoke: small counts, 1 run, fewer peers
  --only=a,b         peers and/or measurements to run (names below)
  --cases=a,b        of a measurement with cases (claim's keys, say), only these
  --reps=N           runs per measurement (default 3, quick 1)
  --baseline=X       also run a second build as ours@base (each variant of ours as <name>@base),
                     its runs alternating with today's; X: a commit, a folder holding a built
                     package or a .tgz (run.sh prepares it; main.js takes the unpacked
                     <folder>/node_modules/nest-pg-job-queue)
  --no-analyze       do not ANALYZE the pre-enqueued backlog before processing (cold statistics)
  --cpu-prof         write .cpuprofile files of the worker processes to bench/profiles/
  --alloc-prof       write .heapprofile files of what the worker processes allocate (freed
                     objects too) to bench/profiles/; read with bench/alloc-summary.js
  --out=FILE         results file (default bench/results.json)
  --list             list peers and measurements
  --soak             instead of the measurements: N minutes of steady load with retention at
                     1 minute, then N with retention off (bench/soak.js); not in CI
  --soak-minutes=N   minutes per soak phase (default 10)
  --soak-rate=N      jobs enqueued per second during the soak (default 5000)
  --held-snapshot    instead of the measurements: steady load through one worker process while
                     another connection holds a REPEATABLE READ snapshot (bench/held-snapshot.js);
                     probe latency per 10 s window; not in CI. --only= picks its variants
  --warm-seconds=N   load before the snapshot is taken (default 60)
  --held-seconds=N   how long the snapshot is held (default 60)
  --after-seconds=N  load after it is released (default 20)
  --held-rate=N      jobs enqueued per second (default 2000)`;

// A library's connection error that nobody listens for (an 'error' event on a pool) would end
// the whole bench: it fails the run under way instead, and the bench goes on.
let failCurrentRun;
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (error) => {
    if (failCurrentRun) return failCurrentRun(error);
    console.error(error);
    process.exit(1);
  });
}

function guarded(run) {
  const crashed = new Promise((_, reject) => {
    failCurrentRun = reject;
  });
  return Promise.race([run(), crashed]).finally(() => {
    failCurrentRun = undefined;
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  // Before the adapters load: the ours adapter adds the `@base` twins from it.
  const baselineInfo = baseline.useBaseline(args.baseline);
  const peers = allPeers();
  if (args.help || args.list) {
    console.log(HELP);
    console.log(`\nmeasurements: ${MEASUREMENTS.map((m) => m.name).join(', ')}`);
    console.log('peers:');
    for (const p of peers) console.log(`  ${p.name.padEnd(18)} ${p.variant.summary}`);
    return;
  }
  if (args.soak) {
    await dropLeftovers();
    await require('./soak').runSoak({ minutes: args.soakMinutes, rate: args.soakRate });
    return;
  }
  if (args.heldSnapshot) {
    await dropLeftovers();
    const { runHeldSnapshot } = require('./held-snapshot');
    const results = await runHeldSnapshot({
      only: args.only,
      warmSeconds: args.warmSeconds,
      heldSeconds: args.heldSeconds,
      afterSeconds: args.afterSeconds,
      rate: args.heldRate,
    });
    const outFile = args.out
      ? path.resolve(args.out)
      : path.join(__dirname, 'results-held-snapshot.json');
    write(outFile, results);
    console.log(`results: ${path.relative(process.cwd(), outFile)}`);
    if (results.variants.some((v) => v.error)) process.exitCode = 1;
    return;
  }
  const cfg = { ...(args.quick ? QUICK : FULL) };
  if (args.reps) cfg.reps = args.reps;
  if (args.noAnalyze) cfg.analyze = false;
  if (args.cpuProf) {
    cfg.cpuProfDir = path.join(__dirname, 'profiles');
    fs.mkdirSync(cfg.cpuProfDir, { recursive: true });
  }
  if (args.allocProf) {
    cfg.allocProfDir = path.join(__dirname, 'profiles');
    fs.mkdirSync(cfg.allocProfDir, { recursive: true });
  }
  const known = new Set([...peers.map((p) => p.name), ...MEASUREMENTS.map((m) => m.name)]);
  const unknown = (args.only ?? []).filter((name) => !known.has(name));
  if (unknown.length) throw new Error(`--only: unknown ${unknown.join(', ')} (see --list)`);
  const onlyPeers = args.only?.filter((n) => peers.some((p) => p.name === n));
  const onlyMeasurements = args.only?.filter((n) => MEASUREMENTS.some((m) => m.name === n));
  // A peer with a baseline twin brings it along (--only=ours runs ours@base too).
  const named = onlyPeers?.length ? onlyPeers : cfg.peers;
  const wanted = named && baseline.withTwins(named, peers);
  const selectedPeers = peers.filter((p) => !wanted || wanted.includes(p.name));
  // A measurement marked onlyWhenNamed (its setup takes minutes) runs only when --only names it.
  const selectedMeasurements = MEASUREMENTS.filter((m) =>
    onlyMeasurements?.length ? onlyMeasurements.includes(m.name) : !m.onlyWhenNamed,
  );

  const outFile = args.out ? path.resolve(args.out) : path.join(__dirname, 'results.json');
  const results = {
    startedAt: new Date().toISOString(),
    config: { ...cfg, runTimeoutMs: undefined },
    machine: await machine(),
    peers: selectedPeers.map((p) => ({ name: p.name, summary: p.variant.summary })),
    ...(baselineInfo && { baseline: baselineInfo }),
    measurements: [],
  };
  console.log(
    `job-queue bench (${cfg.mode}, ${cfg.reps} run${cfg.reps > 1 ? 's' : ''} each) on ${results.machine.postgres}; ` +
      `load average ${results.machine.loadAverageAtStart.join(' ')}`,
  );
  if (baselineInfo) console.log(`baseline (the peers named …@base): ${baselineInfo.source}`);
  await dropLeftovers();

  for (const m of selectedMeasurements) {
    const units = m.cases?.filter((c) => !args.cases || args.cases.includes(c.key)) ?? [m];
    const metrics =
      m.metrics ?? cfg.rssAt.reduce((list, at) => [...list, `${at / 1000}k MB`], ['boot MB']);
    const entry = { name: m.name, title: m.title(cfg), metrics, extras: m.extras, rows: [] };
    const runners = [];
    for (const peer of selectedPeers) {
      if (m.only && !m.only.includes(peer.variant.baseOf ?? peer.name)) continue;
      if (peer.variant.skip?.includes(m.name)) continue;
      for (const unit of units) {
        const label = unit === m ? peer.name : `${peer.name}: ${caseLabel(unit, cfg)}`;
        const row = { peer: peer.name, label, runs: [] };
        entry.rows.push(row);
        runners.push({ peer, unit, row });
      }
    }
    if (runners.length === 0) continue;
    // Each `@base` twin runs right after its original (rows side by side in the table).
    const slots = baseline.pairRunners(runners);
    entry.rows = slots.flat().map((r) => r.row);
    results.measurements.push(entry);
    console.log(`\n== ${entry.title}`);
    // Repetitions go round the peers, so a noisy minute on the machine hits all of them alike.
    for (let rep = 1; rep <= cfg.reps; rep++) {
      for (const { peer, unit, row } of slots.flatMap((slot) => baseline.slotOrder(slot, rep))) {
        if (row.error) continue;
        const started = Date.now();
        try {
          const { extra, ...values } = await guarded(() => unit.run({ peer, cfg }));
          row.runs.push({ ...values, extra });
          const shown = [...metrics, ...(m.extras ?? [])]
            .map((k) => `${k} ${fmt(values[k] ?? extra?.[k])}`)
            .join(', ');
          console.log(
            `  ${row.label} run ${rep}/${cfg.reps}: ${shown}  [${((Date.now() - started) / 1000).toFixed(1)} s]`,
          );
        } catch (error) {
          row.error = error.message;
          console.log(`  ${row.label} run ${rep}/${cfg.reps}: FAILED ${error.stack}`);
        }
      }
    }
    await m.teardown?.();
    for (const row of entry.rows) {
      row.summary = {};
      for (const key of [...metrics, ...(m.extras ?? [])]) {
        row.summary[key] = summarize(
          row.runs.map((r) => r[key] ?? r.extra?.[key]).filter((v) => v !== undefined),
        );
      }
    }
    if (baselineInfo)
      entry.comparisons = baseline.comparisons(slots, [...metrics, ...(m.extras ?? [])]);
    write(outFile, results);
  }
  results.finishedAt = new Date().toISOString();
  results.machine.loadAverageAtEnd = os.loadavg().map((v) => Number(v.toFixed(2)));
  write(outFile, results);
  console.log(render(results, cfg));
  console.log(
    `\nload average at start ${results.machine.loadAverageAtStart.join(' ')}, at end ${results.machine.loadAverageAtEnd.join(' ')}`,
  );
  console.log(`results: ${path.relative(process.cwd(), outFile)}`);
  if (results.measurements.some((m) => m.rows.some((r) => r.error))) process.exitCode = 1;
}

function caseLabel(unit, cfg) {
  return typeof unit.label === 'function' ? unit.label(cfg) : unit.label;
}

function write(file, results) {
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

async function machine() {
  const info = await withClient(serverUrl.toString(), async (client) => {
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    const settings = {};
    for (const name of ['shared_buffers', 'synchronous_commit', 'max_connections', 'fsync']) {
      settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    }
    return { version, settings };
  });
  return {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    postgres: `PostgreSQL ${info.version}`,
    postgresSettings: info.settings,
    redis: redisUrl.host,
    loadAverageAtStart: os.loadavg().map((v) => Number(v.toFixed(2))),
    versions: Object.fromEntries(
      [
        'graphile-worker',
        'pg-boss',
        'bullmq',
        'pg',
        '@nestjs/core',
        '@nestjs/typeorm',
        'typeorm',
      ].map((name) => [name, packageVersion(name)]),
    ),
  };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

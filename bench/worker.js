'use strict';
// One worker process of a processing measurement (spawned by lib/children.js).
// Protocol over IPC: -> ready {rss}; <- go; -> progress {handled, rss} every 100 ms and
// rss {at, rss} when the handled count passes a threshold; <- sample -> sample {cpuMs} (CPU
// time since go); <- stop; -> stopped {handled, queries}.
// With `hold` in the spec (the cancel measurement) each handler runs until its signal aborts:
// -> started {id} when it starts, aborted {id, reason} when it sees the abort.
// With `recordWaits` (the soak) each job's wait, run_at -> started_at, is kept: <- waits ->
// waits {waits} (ms, since the last such message).
// With `recordProbes` (--held-snapshot) each probe job's handler start is kept beside the enqueue
// time it carries (`data.probe`, `data.t`, on the wall clock every process of the machine shares):
// <- probes -> probes {probes: [[t, startMs], ...]} (since the last such message).
const { performance } = require('node:perf_hooks');
const spec = JSON.parse(process.env.BENCH_WORKER_SPEC);
const adapter = require(`./adapters/${spec.adapter}`);
const named = adapter.variants.find((v) => v.name === spec.variant);
// The soak runs a variant with module options of its own (retention on or off).
const variant = spec.moduleOptions ? { ...named, moduleOptions: spec.moduleOptions } : named;

const send = (message) => process.connected && process.send(message);
const rss = () => process.memoryUsage().rss;

async function main() {
  const queryCounts = adapter.instrument ? adapter.instrument() : () => undefined;
  const rssAt = [...(spec.rssAt ?? [])].sort((a, b) => a - b);
  let handled = 0;
  let waits = [];
  let probes = [];
  const onJob = (data, job) => {
    handled++;
    if (spec.recordProbes && data && data.probe) {
      probes.push([data.t, performance.timeOrigin + performance.now()]);
    }
    if (spec.recordWaits && job && job.startedAt && job.runAt) {
      waits.push(job.startedAt.getTime() - job.runAt.getTime());
    }
    if (rssAt.length > 0 && handled >= rssAt[0]) {
      const { rss: now, heapUsed } = process.memoryUsage();
      send({ type: 'rss', at: rssAt.shift(), rss: now, heapUsed });
    }
  };
  const hold = spec.hold
    ? {
        onStart: (id) => send({ type: 'started', id }),
        onAbort: (id, reason) => send({ type: 'aborted', id, reason }),
      }
    : undefined;
  const worker = await adapter.openWorker(spec.db, variant, { onJob, hold });
  let progress;
  let cpuAtGo;
  // Bounded: a worker the parent forgets stops by itself.
  const lifetime = setTimeout(() => {
    console.error(`worker ${process.pid}: lifetime of ${spec.maxLifetimeMs} ms exceeded`);
    process.exit(3);
  }, spec.maxLifetimeMs);
  lifetime.unref();
  process.on('message', async (message) => {
    if (message.type === 'go') {
      cpuAtGo = process.cpuUsage();
      await worker.start();
      progress = setInterval(() => send({ type: 'progress', handled, rss: rss() }), 100);
    } else if (message.type === 'waits') {
      send({ type: 'waits', waits });
      waits = [];
    } else if (message.type === 'probes') {
      send({ type: 'probes', probes });
      probes = [];
    } else if (message.type === 'sample') {
      const cpu = process.cpuUsage(cpuAtGo);
      send({ type: 'sample', cpuMs: (cpu.user + cpu.system) / 1000, handled, rss: rss() });
    } else if (message.type === 'stop') {
      clearInterval(progress);
      await worker.stop();
      send({ type: 'stopped', handled, rss: rss(), queries: queryCounts() });
      setTimeout(() => process.exit(0), 50);
    }
  });
  process.on('disconnect', () => process.exit(2));
  send({ type: 'ready', rss: rss() });
}

main().catch((error) => {
  console.error(`worker ${process.pid} (${spec.variant}) failed:`, error);
  process.exit(1);
});

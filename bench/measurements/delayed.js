'use strict';
// Delayed jobs: how long after its due moment a job's handler starts. `delayedJobs` jobs are
// enqueued at once (one enqueueMany) with delayMs spread evenly from `delayedFirstMs` on,
// `delayedGapMs` apart, for an idle worker with default poll options; the handler records, on
// the wall clock, start minus the job's own runAt (the database's now() + delayMs; PostgreSQL
// runs on this machine, so both clocks are the same one).
const { sleep, waitFor } = require('../lib/timing');
const { percentile } = require('../lib/stats');
const { withPeerDatabase } = require('../lib/workload');

module.exports = {
  name: 'delayed',
  title: (cfg) =>
    `Delayed jobs, due -> handler start, idle worker, default pollIntervalMs: ${cfg.delayedJobs} jobs ` +
    `due ${cfg.delayedGapMs} ms apart over ${((cfg.delayedJobs * cfg.delayedGapMs) / 1000).toFixed(0)} s (ms)`,
  metrics: ['p50 ms', 'p99 ms', 'max ms'],
  extras: ['min ms'],
  only: ['ours'],
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, 'delayed', async (db) => {
      const samples = [];
      const worker = await peer.adapter.openWorker(db, peer.variant, {
        onJob: (_data, job) => samples.push(Date.now() - job.runAt.getTime()),
      });
      let producer;
      try {
        await worker.start();
        producer = await peer.adapter.openProducer(db, peer.variant);
        await sleep(cfg.latencyIdleMs); // the worker settles into idle
        const jobs = Array.from({ length: cfg.delayedJobs }, (_, i) => ({
          data: { i },
          delayMs: cfg.delayedFirstMs + i * cfg.delayedGapMs,
        }));
        await producer.addDelayed(jobs);
        await waitFor(() => samples.length >= cfg.delayedJobs, {
          intervalMs: 50,
          timeoutMs: cfg.delayedFirstMs + cfg.delayedJobs * cfg.delayedGapMs + 30_000,
          what: `${cfg.delayedJobs} delayed handler starts`,
        });
        return {
          'p50 ms': percentile(samples, 50),
          'p99 ms': percentile(samples, 99),
          'max ms': Math.max(...samples),
          // Below 0: a handler started before its job was due.
          'min ms': Math.min(...samples),
        };
      } finally {
        if (producer) await producer.close();
        await worker.stop();
      }
    });
  },
};

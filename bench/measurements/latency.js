'use strict';
// End-to-end latency, enqueue -> handler start, with an idle worker: jobs enqueued one by one,
// `latencyGapMs` apart, each carrying its enqueue time; the handler (same process, same clock)
// records the difference.
const { performance } = require('node:perf_hooks');
const { sleep, waitFor } = require('../lib/timing');
const { percentile } = require('../lib/stats');
const { withPeerDatabase } = require('../lib/workload');

const clock = () => performance.timeOrigin + performance.now();

module.exports = {
  name: 'latency',
  title: (cfg) =>
    `Latency enqueue -> handler start, idle worker: ${cfg.latencyJobs} jobs ${cfg.latencyGapMs} ms apart (ms)`,
  metrics: ['p50 ms', 'p95 ms', 'p99 ms'],
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, 'latency', async (db) => {
      const samples = [];
      const worker = await peer.adapter.openWorker(db, peer.variant, {
        onJob: (data) => samples.push(clock() - data.t),
      });
      let producer;
      try {
        await worker.start();
        producer = await peer.adapter.openProducer(db, peer.variant);
        await sleep(cfg.latencyIdleMs); // the worker settles into idle
        const start = clock();
        for (let i = 0; i < cfg.latencyJobs; i++) {
          const wait = start + i * cfg.latencyGapMs - clock();
          if (wait > 0) await sleep(wait);
          await producer.add({ t: clock(), i });
        }
        await waitFor(() => samples.length >= cfg.latencyJobs, {
          intervalMs: 20,
          timeoutMs: 30_000,
          what: `${cfg.latencyJobs} handler starts`,
        });
        return {
          'p50 ms': percentile(samples, 50),
          'p95 ms': percentile(samples, 95),
          'p99 ms': percentile(samples, 99),
        };
      } finally {
        if (producer) await producer.close();
        await worker.stop();
      }
    });
  },
};

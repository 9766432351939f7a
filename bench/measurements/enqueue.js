'use strict';
// Enqueue one job at a time, each awaited before the next (a request handler's pattern).
const { nowMs } = require('../lib/timing');
const { withPeerDatabase } = require('../lib/workload');

module.exports = {
  name: 'enqueue',
  title: (cfg) =>
    `Enqueue one at a time: ${cfg.enqueueJobs.toLocaleString('en')} jobs, sequential awaits`,
  metrics: ['jobs/s', 'µs/job'],
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, 'enqueue', async (db) => {
      const producer = await peer.adapter.openProducer(db, peer.variant);
      try {
        for (let i = 0; i < cfg.warmupJobs; i++) await producer.add({ i: -1 });
        const deadline = Date.now() + cfg.runTimeoutMs;
        const t0 = nowMs();
        for (let i = 0; i < cfg.enqueueJobs; i++) {
          await producer.add({ i });
          if ((i & 255) === 0 && Date.now() > deadline)
            throw new Error(`over ${cfg.runTimeoutMs} ms`);
        }
        const ms = nowMs() - t0;
        return { 'jobs/s': (cfg.enqueueJobs / ms) * 1000, 'µs/job': (ms * 1000) / cfg.enqueueJobs };
      } finally {
        await producer.close();
      }
    });
  },
};

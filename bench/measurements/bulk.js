'use strict';
// Bulk enqueue through each peer's batch API: our enqueueMany, graphile-worker addJobs,
// pg-boss insert, BullMQ addBulk, raw unnest INSERT; `bulkChunk` jobs per call.
const { nowMs } = require('../lib/timing');
const { withPeerDatabase, addInChunks } = require('../lib/workload');

module.exports = {
  name: 'bulk',
  title: (cfg) =>
    `Bulk enqueue: ${cfg.bulkJobs.toLocaleString('en')} jobs, ${cfg.bulkChunk.toLocaleString('en')} per call`,
  metrics: ['jobs/s'],
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, 'bulk', async (db) => {
      const producer = await peer.adapter.openProducer(db, peer.variant);
      try {
        await producer.add({ i: -1 }); // connection and statements warmed
        const t0 = nowMs();
        await addInChunks(producer, cfg.bulkJobs, cfg.bulkChunk);
        const ms = nowMs() - t0;
        return { 'jobs/s': (cfg.bulkJobs / ms) * 1000 };
      } finally {
        await producer.close();
      }
    });
  },
};

'use strict';
// Shared steps of the measurements: a fresh database with a peer's schema, and bulk loading.
const { withFreshDatabase } = require('./db');

/** Runs `fn(db)` on a fresh database holding the peer's schema; Redis keys get their own prefix. */
async function withPeerDatabase(peer, tag, fn) {
  return withFreshDatabase(`${tag}_${peer.name}`, async (base) => {
    const db = { ...base, redisPrefix: `jqbench:${base.name}` };
    try {
      await peer.adapter.prepare(db, peer.variant);
      return await fn(db);
    } finally {
      if (peer.adapter.cleanup) {
        await peer.adapter
          .cleanup(db, peer.variant)
          .catch((e) => console.error(`  cleanup: ${e.message}`));
      }
    }
  });
}

/** Adds `total` jobs `{ i }` through the peer's batch API, `chunk` per call. */
async function addInChunks(producer, total, chunk) {
  for (let start = 0; start < total; start += chunk) {
    const list = [];
    for (let i = start; i < Math.min(total, start + chunk); i++) list.push({ i });
    await producer.addBulk(list);
  }
}

module.exports = { withPeerDatabase, addInChunks };

'use strict';
// The peers: every variant of every adapter file in bench/adapters, by name.
const ADAPTER_FILES = ['ours', 'raw-sql', 'graphile-worker', 'pg-boss', 'bullmq'];

function allPeers() {
  const peers = [];
  for (const file of ADAPTER_FILES) {
    const adapter = require(`../adapters/${file}`);
    for (const variant of adapter.variants)
      peers.push({ name: variant.name, file, adapter, variant });
  }
  return peers;
}

module.exports = { allPeers };

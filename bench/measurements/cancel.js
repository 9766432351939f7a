'use strict';
// Cancel -> abort latency: a handler runs in a worker process of its own until its signal
// aborts; this process cancels the job through QueueService.cancel() and times, on its own
// clock, from the call to the worker's "aborted" message. One job at a time, `cancelJobs` times.
const { fork } = require('node:child_process');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { percentile } = require('../lib/stats');
const { withTimeout } = require('../lib/timing');
const { withPeerDatabase } = require('../lib/workload');

const WORKER = path.join(__dirname, '..', 'worker.js');
const STEP_TIMEOUT_MS = 30_000;

/** The worker process, and a way to wait for its next message of a kind about a job. */
function spawnHoldingWorker(peer, db, cfg) {
  const spec = {
    adapter: peer.file,
    variant: peer.variant.name,
    db,
    hold: true,
    // Bounded by the steps it may take: a cancel that waits for a heartbeat takes seconds.
    maxLifetimeMs: cfg.runTimeoutMs + cfg.cancelJobs * STEP_TIMEOUT_MS,
  };
  const child = fork(WORKER, [], {
    env: { ...process.env, BENCH_WORKER_SPEC: JSON.stringify(spec) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiters = new Map();
  const arrived = new Map();
  let exited;
  const onMessage = (message) => {
    const key = `${message.type}:${message.id ?? ''}`;
    const at = performance.now();
    const waiter = waiters.get(key);
    if (waiter) {
      waiters.delete(key);
      waiter({ ...message, at });
    } else arrived.set(key, { ...message, at });
  };
  child.on('message', onMessage);
  child.once('exit', (code, signal) => {
    exited = new Error(`cancel worker exited (${signal ?? code})`);
    for (const reject of waiters.values()) reject(undefined);
  });
  const next = (type, id = '') =>
    withTimeout(
      new Promise((resolve, reject) => {
        const key = `${type}:${id}`;
        if (exited) return reject(exited);
        const early = arrived.get(key);
        if (early) {
          arrived.delete(key);
          return resolve(early);
        }
        waiters.set(key, (message) => (message ? resolve(message) : reject(exited)));
      }),
      STEP_TIMEOUT_MS,
      `the cancel worker's ${type} ${id}`,
    );
  const stop = async () => {
    if (exited) return;
    child.send({ type: 'stop' });
    await withTimeout(next('stopped'), cfg.stopTimeoutMs, 'the cancel worker to stop').catch(() =>
      child.kill('SIGKILL'),
    );
  };
  return { child, next, stop };
}

module.exports = {
  name: 'cancel',
  title: (cfg) =>
    `Cancel -> abort of a running handler in another process, default options: ${cfg.cancelJobs} cancels (ms)`,
  metrics: ['p50 ms', 'p99 ms', 'max ms'],
  only: ['ours'],
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, 'cancel', async (db) => {
      const worker = spawnHoldingWorker(peer, db, cfg);
      let producer;
      try {
        await worker.next('ready');
        worker.child.send({ type: 'go' });
        producer = await peer.adapter.openProducer(db, peer.variant);
        const samples = [];
        for (let i = 0; i < cfg.cancelJobs; i++) {
          const job = await producer.add({ i });
          await worker.next('started', job.id);
          const start = performance.now();
          await producer.cancel(job.id);
          const aborted = await worker.next('aborted', job.id);
          if (aborted.reason !== 'JobCancelledError') {
            throw new Error(`job ${job.id} aborted with ${aborted.reason}, not a cancel`);
          }
          samples.push(aborted.at - start);
        }
        return {
          'p50 ms': percentile(samples, 50),
          'p99 ms': percentile(samples, 99),
          'max ms': Math.max(...samples),
        };
      } finally {
        if (producer) await producer.close();
        await worker.stop();
      }
    });
  },
};

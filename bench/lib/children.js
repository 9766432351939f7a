'use strict';
// Worker processes for the processing measurements: spawn, wait until ready, start them all
// at once, follow their progress, stop them (killed if they do not stop in time).
const { fork } = require('node:child_process');
const path = require('node:path');
const { withTimeout } = require('./timing');

const WORKER = path.join(__dirname, '..', 'worker.js');
const ALLOC_PROFILE = path.join(__dirname, 'alloc-profile.js');
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

class WorkerGroup {
  constructor({
    adapter,
    variant,
    db,
    count,
    rssAt,
    maxLifetimeMs,
    cpuProfDir,
    allocProfDir,
    moduleOptions,
    recordWaits,
    recordProbes,
  }) {
    this.children = [];
    this.exitError = undefined;
    const spec = JSON.stringify({
      adapter,
      variant,
      db,
      rssAt,
      maxLifetimeMs,
      moduleOptions,
      recordWaits,
      recordProbes,
    });
    for (let i = 0; i < count; i++) {
      const execArgv = [
        ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
        ...(allocProfDir ? ['--require', ALLOC_PROFILE] : []),
      ];
      const child = fork(WORKER, [], {
        env: {
          ...process.env,
          BENCH_WORKER_SPEC: spec,
          ...(allocProfDir ? { BENCH_ALLOC_PROF_DIR: allocProfDir } : {}),
        },
        execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      live.add(child);
      const state = {
        child,
        handled: 0,
        rss: 0,
        rssAt: {},
        heapAt: {},
        readyRss: 0,
        final: undefined,
        exited: false,
      };
      state.ready = new Promise((resolve, reject) => {
        child.on('message', (m) => {
          if (m.type === 'ready') {
            state.readyRss = m.rss;
            resolve();
          } else if (m.type === 'progress') {
            state.handled = m.handled;
            state.rss = m.rss;
          } else if (m.type === 'rss') {
            state.rssAt[m.at] = m.rss;
            state.heapAt[m.at] = m.heapUsed;
          } else if (m.type === 'waits') {
            state.onWaits?.(m.waits);
          } else if (m.type === 'probes') {
            state.onProbes?.(m.probes);
          } else if (m.type === 'sample') {
            state.sample = m;
            state.onSample?.();
          } else if (m.type === 'stopped') {
            state.final = m;
            state.handled = m.handled;
          }
        });
        child.once('exit', (code, signal) => {
          live.delete(child);
          state.exited = true;
          if (!state.final && !this.stopping) {
            this.exitError ??= new Error(
              `worker process ${child.pid} exited early (${signal ?? code})`,
            );
          }
          reject(this.exitError ?? new Error(`worker ${child.pid} exited`));
        });
      });
      state.ready.catch(() => undefined);
      state.exit = new Promise((resolve) => child.once('exit', resolve));
      this.children.push(state);
    }
  }

  ready(timeoutMs) {
    return withTimeout(
      Promise.all(this.children.map((c) => c.ready)),
      timeoutMs,
      'worker processes to boot',
    );
  }

  go() {
    for (const c of this.children) c.child.send({ type: 'go' });
  }

  /** Jobs the handlers have run so far, all processes together (throws if one died). */
  handled() {
    if (this.exitError) throw this.exitError;
    return this.children.reduce((sum, c) => sum + c.handled, 0);
  }

  /** CPU ms each worker process used since the start signal. */
  async cpuSample(timeoutMs) {
    const replies = this.children.map(
      (c) =>
        new Promise((resolve) => {
          c.onSample = () => resolve(c.sample.cpuMs);
          c.child.send({ type: 'sample' });
        }),
    );
    return withTimeout(Promise.all(replies), timeoutMs, 'worker CPU samples');
  }

  /** Waits (ms, run_at -> start) every process recorded since the last call (`recordWaits`). */
  async collectWaits(timeoutMs) {
    const replies = this.children.map(
      (c) =>
        new Promise((resolve) => {
          c.onWaits = resolve;
          c.child.send({ type: 'waits' });
        }),
    );
    return (await withTimeout(Promise.all(replies), timeoutMs, 'worker waits')).flat();
  }

  /** Probe jobs started since the last call (`recordProbes`): [enqueue t, handler start] pairs. */
  async collectProbes(timeoutMs) {
    const replies = this.children.map(
      (c) =>
        new Promise((resolve) => {
          c.onProbes = resolve;
          c.child.send({ type: 'probes' });
        }),
    );
    return (await withTimeout(Promise.all(replies), timeoutMs, 'worker probes')).flat();
  }

  async stop(timeoutMs) {
    this.stopping = true;
    for (const c of this.children) if (!c.exited) c.child.send({ type: 'stop' });
    try {
      await withTimeout(
        Promise.all(this.children.map((c) => c.exit)),
        timeoutMs,
        'worker processes to stop',
      );
    } catch (error) {
      for (const c of this.children) if (!c.exited) c.child.kill('SIGKILL');
      await Promise.all(this.children.map((c) => c.exit));
      console.error(`  (${error.message}; killed)`);
    }
    return this.children.map((c) => ({
      final: c.final,
      rssAt: c.rssAt,
      heapAt: c.heapAt,
      readyRss: c.readyRss,
      lastRss: c.rss,
    }));
  }
}

module.exports = { WorkerGroup };

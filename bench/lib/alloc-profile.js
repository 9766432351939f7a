'use strict';
// Preloaded (`node --require`) into each worker process by `--alloc-prof`: samples what the
// process allocates, the objects a garbage collection freed included (Node's own --heap-prof
// keeps only those still alive, so it shows what a process holds, not what it churns), and
// writes the profile to BENCH_ALLOC_PROF_DIR as it exits. Read one with bench/alloc-summary.js.
const fs = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const SAMPLING_INTERVAL_BYTES = 1024;

const dir = process.env.BENCH_ALLOC_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // The session is this thread's own: the answer comes before `post` returns.
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (error, answer) => {
      if (error) {
        process.stderr.write(`--alloc-prof: no profile of ${process.pid}: ${error.message}\n`);
        return;
      }
      const file = path.join(dir, `Alloc.${Date.now()}.${process.pid}.heapprofile`);
      fs.writeFileSync(file, JSON.stringify(answer.profile));
    });
  });
}

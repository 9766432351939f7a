'use strict';
// graphile-worker 0.17.3: batched as its performance docs describe (localQueue of 500 jobs,
// completeJobBatchDelay / failJobBatchDelay 0; concurrency 24, and 10, 50 and 200 beside ours)
// and unbatched (its defaults, concurrency 24). Completed jobs are deleted, so "done" =
// enqueued - rows left.
const { Client } = require('pg');
const { run, runMigrations, makeWorkerUtils, Logger } = require('graphile-worker');

const TASK = 'bench_noop';
const quiet = new Logger(() => (level, message) => {
  if (level === 'error') console.error(`[graphile-worker] ${message}`);
});

const variant = (name, summary, preset, skip = [], concurrency = 24) => ({
  name,
  summary,
  concurrency,
  preset,
  skip,
});

const BATCHED = {
  worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
};

// Batched as graphile-batched, at the concurrency our worker is measured at.
const atConcurrency = (concurrency) =>
  variant(
    `graphile-c${concurrency}`,
    `concurrency ${concurrency}, localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0`,
    BATCHED,
    ['enqueue', 'bulk'],
    concurrency,
  );

module.exports = {
  variants: [
    variant(
      'graphile-batched',
      'concurrency 24, localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0',
      BATCHED,
    ),
    // Same producer side as graphile-batched: enqueue and bulk are measured once.
    variant(
      'graphile',
      'concurrency 24, no local queue, no completion batching (defaults)',
      undefined,
      ['enqueue', 'bulk'],
    ),
    atConcurrency(10),
    atConcurrency(50),
    atConcurrency(200),
  ],

  async prepare(db) {
    await runMigrations({ connectionString: db.url, logger: quiet });
  },

  async openProducer(db) {
    const utils = await makeWorkerUtils({ connectionString: db.url, logger: quiet });
    return {
      add: (payload) => utils.addJob(TASK, payload),
      addBulk: (list) => utils.addJobs(list.map((payload) => ({ identifier: TASK, payload }))),
      close: () => utils.release(),
    };
  },

  async openCounter(db) {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    return {
      count: async (total) =>
        total -
        Number(
          (await client.query('SELECT count(*) AS n FROM graphile_worker._private_jobs')).rows[0].n,
        ),
      close: () => client.end(),
    };
  },

  async openWorker(db, v, { onJob }) {
    let runner;
    return {
      async start() {
        runner = await run({
          connectionString: db.url,
          concurrency: v.concurrency,
          noHandleSignals: true,
          logger: quiet,
          taskList: {
            [TASK]: async (payload) => {
              onJob(payload);
            },
          },
          ...(v.preset ? { preset: v.preset } : {}),
        });
      },
      async stop() {
        if (!runner) return;
        await runner.stop();
        await runner.promise; // settles once its pool is released
      },
    };
  },
};

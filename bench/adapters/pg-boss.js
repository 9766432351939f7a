'use strict';
// pg-boss 10.4.2 (11+ needs Node 22). v10's work() takes `batchSize` and hands the handler an
// array; it has no teamSize / teamConcurrency (removed in v10) and no localConcurrency (v11+),
// so one work() loop per process, polling at pollingIntervalSeconds 0.5 (the least it allows).
// The producer and the worker are separate PgBoss instances, as separate processes would be.
const { Client } = require('pg');
const PgBoss = require('pg-boss');

const QUEUE = 'bench';
const POLLING_INTERVAL_SECONDS = 0.5;

function newBoss(url) {
  const boss = new PgBoss({ connectionString: url, schedule: false });
  boss.on('error', (error) => console.error(`[pg-boss] ${error.message}`));
  return boss;
}

const variant = (batchSize, skip = []) => ({
  name: `pg-boss-b${batchSize}`,
  summary: `work() with batchSize ${batchSize}, pollingIntervalSeconds ${POLLING_INTERVAL_SECONDS}`,
  batchSize,
  skip,
});

module.exports = {
  variants: [variant(5000), variant(1000, ['enqueue', 'bulk'])], // one producer side

  async prepare(db) {
    const boss = newBoss(db.url);
    await boss.start();
    await boss.createQueue(QUEUE);
    await boss.stop({ graceful: false, wait: true });
  },

  async openProducer(db) {
    const boss = newBoss(db.url);
    await boss.start();
    return {
      add: (data) => boss.send(QUEUE, data),
      addBulk: (list) => boss.insert(list.map((data) => ({ name: QUEUE, data }))),
      close: () => boss.stop({ graceful: false, wait: true }),
    };
  },

  async openCounter(db) {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    return {
      count: async () =>
        Number(
          (
            await client.query(
              `SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'`,
              [QUEUE],
            )
          ).rows[0].n,
        ),
      close: () => client.end(),
    };
  },

  async openWorker(db, v, { onJob }) {
    const boss = newBoss(db.url);
    await boss.start();
    return {
      async start() {
        await boss.work(
          QUEUE,
          { batchSize: v.batchSize, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
          async (jobs) => {
            for (const job of jobs) onJob(job.data);
          },
        );
      },
      stop: () => boss.stop({ graceful: true, wait: true, timeout: 10_000 }),
    };
  },
};

'use strict';
// BullMQ 6.7.0, on the two backends that version ships:
//  - bullmq-pg: its PostgreSQL backend. The installed package documents it only in its type
//    declarations (its README does not mention PostgreSQL): `runMigrations(client, schema)` on a
//    dedicated client, then `createPostgresBackend` passed as the last constructor argument of
//    Queue and Worker, with `connection` a node-postgres pool config.
//  - bullmq-redis: the classic Redis backend on the local Redis, for reference. Each
//    measurement gets its own key prefix, obliterated afterwards (never FLUSHDB: the server is
//    shared).
// Completed jobs are kept (BullMQ's default), as our library keeps its rows.
const { Client } = require('pg');
const { Queue, Worker, createPostgresBackend, runMigrations } = require('bullmq');
const { redisConnection } = require('../lib/env');

const QUEUE = 'bench';
const CONCURRENCY = 50;

function queueArgs(db, v) {
  if (v.backend === 'pg')
    return [{ connection: { connectionString: db.url } }, createPostgresBackend];
  return [{ connection: redisConnection(), prefix: db.redisPrefix }];
}

module.exports = {
  variants: [
    {
      name: 'bullmq-pg',
      backend: 'pg',
      summary: `PostgreSQL backend (createPostgresBackend), Worker concurrency ${CONCURRENCY}`,
    },
    {
      name: 'bullmq-redis',
      backend: 'redis',
      noDatabase: true,
      summary: `Redis backend (local Redis), Worker concurrency ${CONCURRENCY}`,
    },
  ],

  async prepare(db, v) {
    if (v.backend !== 'pg') return;
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await runMigrations(client);
    } finally {
      await client.end();
    }
  },

  async openProducer(db, v) {
    const [opts, factory] = queueArgs(db, v);
    const queue = new Queue(QUEUE, opts, factory);
    queue.on('error', (error) => console.error(`[bullmq] ${error.message}`));
    await queue.waitUntilReady();
    return {
      add: (data) => queue.add('noop', data),
      addBulk: (list) => queue.addBulk(list.map((data) => ({ name: 'noop', data }))),
      close: () => queue.close(),
    };
  },

  async openCounter(db, v) {
    const [opts, factory] = queueArgs(db, v);
    const queue = new Queue(QUEUE, opts, factory);
    queue.on('error', (error) => console.error(`[bullmq] ${error.message}`));
    await queue.waitUntilReady();
    return { count: () => queue.getCompletedCount(), close: () => queue.close() };
  },

  /** Redis keys are not dropped with a database: remove this measurement's queue. */
  async cleanup(db, v) {
    if (v.backend === 'pg') return;
    const [opts] = queueArgs(db, v);
    const queue = new Queue(QUEUE, opts);
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  },

  async openWorker(db, v, { onJob }) {
    const [opts, factory] = queueArgs(db, v);
    const worker = new Worker(
      QUEUE,
      async (job) => {
        onJob(job.data);
      },
      { ...opts, concurrency: CONCURRENCY, autorun: false },
      factory,
    );
    worker.on('error', (error) => console.error(`[bullmq] ${error.message}`));
    await worker.waitUntilReady();
    let running;
    return {
      async start() {
        running = worker.run().catch((error) => console.error(`[bullmq] worker: ${error.message}`));
      },
      async stop() {
        await worker.close();
        await running;
      },
    };
  },
};

'use strict';
// The ceiling: `pg` and no library. A minimal jobs table; bulk insert through unnest; claim a
// batch with FOR UPDATE SKIP LOCKED, run it, complete it with one UPDATE per batch. One
// connection per worker process, so "x1" is one connection and "x4" four. No retries, leases,
// heartbeats or wake-ups: what any queue on this table pays at least.
const { Client } = require('pg');
const { sleep } = require('../lib/timing');

const SCHEMA = `
  CREATE TABLE raw_jobs (
    id         bigserial PRIMARY KEY,
    job_type   text NOT NULL,
    data       jsonb NOT NULL,
    status     text NOT NULL DEFAULT 'pending',
    worker_id  text,
    attempts   integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX raw_jobs_pending_idx ON raw_jobs (id) WHERE status = 'pending';`;

const CLAIM = `
  WITH batch AS (
    SELECT id FROM raw_jobs WHERE status = 'pending' ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  UPDATE raw_jobs AS j SET status = 'running', worker_id = $1, attempts = j.attempts + 1, updated_at = now()
  FROM batch WHERE j.id = batch.id
  RETURNING j.id, j.data`;

const COMPLETE = `UPDATE raw_jobs SET status = 'done', updated_at = now() WHERE id = ANY($1::bigint[])`;
const IDLE_WAIT_MS = 20;

async function connect(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

const variant = (batch, skip) => ({
  name: `raw-sql-b${batch}`,
  summary: `pg only: unnest insert; SKIP LOCKED claim of ${batch}, one UPDATE per batch; 1 connection per process`,
  batch,
  skip: ['latency', ...skip],
});

module.exports = {
  variants: [variant(100, ['enqueue', 'bulk']), variant(500, [])], // one producer side

  async prepare(db) {
    const client = await connect(db.url);
    try {
      await client.query(SCHEMA);
    } finally {
      await client.end();
    }
  },

  async openProducer(db) {
    const client = await connect(db.url);
    return {
      add: (data) =>
        client.query(`INSERT INTO raw_jobs (job_type, data) VALUES ($1, $2)`, ['bench.noop', data]),
      addBulk: (list) =>
        client.query(
          `INSERT INTO raw_jobs (job_type, data) SELECT * FROM unnest($1::text[], $2::jsonb[])`,
          [list.map(() => 'bench.noop'), list.map((data) => JSON.stringify(data))],
        ),
      close: () => client.end(),
    };
  },

  async openCounter(db) {
    const client = await connect(db.url);
    return {
      count: async () =>
        Number(
          (await client.query(`SELECT count(*) AS n FROM raw_jobs WHERE status = 'done'`)).rows[0]
            .n,
        ),
      close: () => client.end(),
    };
  },

  async openWorker(db, v, { onJob }) {
    const client = await connect(db.url);
    const workerId = `raw:${process.pid}`;
    let stopped = false;
    let loop;
    return {
      async start() {
        loop = (async () => {
          while (!stopped) {
            const { rows } = await client.query(CLAIM, [workerId, v.batch]);
            if (rows.length === 0) {
              await sleep(IDLE_WAIT_MS);
              continue;
            }
            for (const row of rows) onJob(row.data);
            await client.query(COMPLETE, [rows.map((row) => row.id)]);
          }
        })();
      },
      async stop() {
        stopped = true;
        await loop;
        await client.end();
      },
    };
  },
};

'use strict';
// node bench/finished-index-cost.js (after `npm run build:lib`): what jobs_finished_idx, the
// pruner's index, costs the write that finishes jobs. Two fresh databases migrated alike, the
// index dropped in one; 200,000 running jobs each are completed 500 per UPDATE (the completer's
// batch shape, synchronous_commit off), rounds alternating between the two databases so a
// noisy moment hits both. Prints the median time per UPDATE and per job. Not in CI.
const { withClient } = require('./lib/db');
const { createMigratedDatabase, dropMigratedDatabases } = require('./lib/migrated-database');
const { Client } = require('pg');
const { median } = require('./lib/stats');
const { nowMs } = require('./lib/timing');

const JOBS = 200_000;
const BATCH = 500;

async function prepare(tag, dropIndex) {
  const db = await createMigratedDatabase(tag);
  await withClient(db.url, async (client) => {
    if (dropIndex) await client.query('DROP INDEX job_queue.jobs_finished_idx');
    await client.query(
      `INSERT INTO job_queue.jobs (job_type, status, started_at, worker_id, run_token, attempts)
       SELECT 'bench.noop', 'running', now(), 'w', 1, 1 FROM generate_series(1, $1::int)`,
      [JOBS],
    );
    await client.query('VACUUM ANALYZE job_queue.jobs');
  });
  const client = new Client({ connectionString: db.url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  return { ...db, client, times: [] };
}

async function main() {
  const sides = {
    with: await prepare('idx_with', false),
    without: await prepare('idx_without', true),
  };
  try {
    for (let round = 0; round < JOBS / BATCH; round++) {
      const order = round % 2 ? ['with', 'without'] : ['without', 'with'];
      for (const key of order) {
        const start = nowMs();
        await sides[key].client.query(
          `UPDATE job_queue.jobs SET status = 'completed', result = 'null'::jsonb,
                  completed_at = now(), heartbeat_at = NULL, updated_at = now()
            WHERE id BETWEEN $1 AND $2`,
          [round * BATCH + 1, (round + 1) * BATCH],
        );
        sides[key].times.push(nowMs() - start);
      }
    }
    for (const [key, side] of Object.entries(sides)) {
      const ms = median(side.times);
      console.log(
        `${key.padEnd(7)} jobs_finished_idx: median ${ms.toFixed(2)} ms per UPDATE of ${BATCH} ` +
          `(${((ms * 1000) / BATCH).toFixed(1)} µs per job)`,
      );
    }
  } finally {
    await dropMigratedDatabases(Object.values(sides));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

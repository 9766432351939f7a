'use strict';
// Cost of our claim_job_batch, called as the poller calls it, with the table holding nothing
// but the pending jobs to claim, and with a million finished (completed) rows beside them.
// Client-side round trip per call, median over `claimCalls` calls per batch size.
const { Client } = require('pg');
const { nowMs } = require('../lib/timing');
const { median } = require('../lib/stats');
const { withPeerDatabase } = require('../lib/workload');

const SIZES = [10, 100];
const WARMUP_CALLS = 10;
const JOB_TYPE = 'bench.noop';

async function fill(client, finished, pending) {
  // Finished rows, as completed jobs look: attempts 1, timestamps set, older than the pending.
  for (let done = 0; done < finished; done += 250_000) {
    await client.query(
      `INSERT INTO jobs (job_type, status, data, attempts, worker_id, claimed_at, started_at,
                         completed_at, created_at, updated_at, run_at, result)
       SELECT $1, 'completed', jsonb_build_object('i', g), 1, 'bench', now(), now(), now(),
              now() - interval '1 day', now(), now() - interval '1 day', 'null'::jsonb
       FROM generate_series(1, $2) AS g`,
      [JOB_TYPE, Math.min(250_000, finished - done)],
    );
  }
  await client.query(
    `INSERT INTO jobs (job_type, data) SELECT $1, jsonb_build_object('i', g) FROM generate_series(1, $2) AS g`,
    [JOB_TYPE, pending],
  );
  await client.query('VACUUM ANALYZE jobs');
}

const claimCase = (key, label, finishedOf) => ({
  key,
  label,
  async run({ peer, cfg }) {
    const finished = finishedOf(cfg);
    return withPeerDatabase(peer, `claim_${key}`, async (db) => {
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        const calls = cfg.claimCalls + WARMUP_CALLS;
        await fill(client, finished, calls * SIZES.reduce((a, b) => a + b, 0));
        const result = {};
        for (const size of SIZES) {
          const times = [];
          for (let i = 0; i < calls; i++) {
            const t0 = nowMs();
            const { rows } = await client.query(
              `SELECT * FROM claim_job_batch($1, $2::varchar[], $3)`,
              ['bench-claimer', [JOB_TYPE], size],
            );
            const ms = nowMs() - t0;
            if (rows.length !== size) throw new Error(`claimed ${rows.length} of ${size}`);
            if (i >= WARMUP_CALLS) times.push(ms);
          }
          result[`ms/claim of ${size}`] = median(times);
        }
        const { rows } = await client.query(
          `SELECT pg_size_pretty(pg_total_relation_size('jobs')) AS size`,
        );
        result.extra = { finishedRows: finished, tableSize: rows[0].size };
        return result;
      } finally {
        await client.end();
      }
    });
  },
});

module.exports = {
  name: 'claim',
  title: (cfg) =>
    `claim_job_batch cost: median of ${cfg.claimCalls} calls (ms per call, client round trip)`,
  metrics: SIZES.map((size) => `ms/claim of ${size}`),
  only: ['ours'],
  cases: [
    claimCase('empty', 'no finished rows', () => 0),
    claimCase('finished', 'finished rows', (cfg) => cfg.claimFinishedRows),
  ],
};

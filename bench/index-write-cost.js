'use strict';
// node bench/index-write-cost.js [--jobs=100000] [--rounds=4] (after `npm run build:lib`): what
// the indexes that a job's two state changes write to cost the database, per job, and what
// keeping a completed job costs at all. Each variant is a fresh database migrated alike, with some
// indexes dropped; in each, the jobs are claimed 500 at a time and completed by the library's own
// statements (`claimAndStartJobs`, `finishJobs`, as a worker sends them), one connection, nothing
// else running. The last two variants complete them under the same guard by deleting their rows,
// as a queue that keeps no finished job does (graphile-worker), or by moving them to a table of
// finished jobs with a primary key and an index for retention (as pg-boss 10 archives them). The
// figures are that backend's CPU time (/proc, the server runs on this machine) in the claims and
// in the completions, over the jobs, rounds alternating between the variants so a noisy moment
// hits them all. The dropped indexes serve the reaper (jobs_lease_idx), the listing
// (jobs_list_idx) and retention (jobs_finished_idx): this measures what they cost, not a
// configuration to run. Not in CI.
const path = require('node:path');
const { Client } = require(require.resolve('pg', { paths: [path.join(__dirname, '..')] }));
const { claimAndStartJobs } = require('../libs/job-queue/dist/sql/claim-job-batch.query');
const { finishJobs } = require('../libs/job-queue/dist/sql/finish-jobs.query');
const { createMigratedDatabase, dropMigratedDatabases } = require('./lib/migrated-database');
const { processCpuMs } = require('./lib/process-cpu');
const { summarize } = require('./lib/stats');

const option = (name, fallback) => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given ? Number(given.slice(name.length + 3)) : fallback;
};
const JOBS = option('jobs', 100_000);
const ROUNDS = option('rounds', 4);
const BATCH = 500;
const TYPE = 'bench.noop';

const VARIANTS = {
  'all indexes': { dropped: [] },
  'without jobs_list_idx': { dropped: ['jobs_list_idx'] },
  'without jobs_lease_idx': { dropped: ['jobs_lease_idx'] },
  'without jobs_finished_idx': { dropped: ['jobs_finished_idx'] },
  'without all three': { dropped: ['jobs_list_idx', 'jobs_lease_idx', 'jobs_finished_idx'] },
  'completed rows deleted': { dropped: [], completion: 'delete' },
  'completed rows moved': { dropped: [], completion: 'move' },
};

/** The completion of a queue that keeps no finished job: the library's guard, then DELETE. */
const DELETE_COMPLETED = `
  DELETE FROM job_queue.jobs j
  USING ROWS FROM (pg_catalog.unnest($1::bigint[]), pg_catalog.unnest($2::integer[]))
    AS o(id, run_token)
  WHERE j.id = o.id AND j.run_token = o.run_token AND j.worker_id = 'w'
    AND j.status IN ('claimed', 'running')`;

/**
 * A table of finished jobs beside the live one (as pg-boss 10 keeps its archive), with the
 * indexes a job's look-up by id and retention by age would need, and the completion that moves a
 * job there: the same DELETE, its rows inserted as completed.
 */
const FINISHED_TABLE = [
  'CREATE TABLE job_queue.jobs_finished (LIKE job_queue.jobs INCLUDING DEFAULTS)',
  'ALTER TABLE job_queue.jobs_finished ADD PRIMARY KEY (id)',
  'CREATE INDEX ON job_queue.jobs_finished (job_type, status, completed_at)',
];
/** `columns` of `jobs` in order, as the moving completion inserts them: finished now. */
const moveCompleted = (columns) => {
  const finished = { status: "'completed'", completed_at: 'now()', heartbeat_at: 'NULL' };
  const values = columns.map((column) => finished[column] ?? `moved.${column}`);
  return `
  WITH moved AS (${DELETE_COMPLETED} RETURNING j.*)
  INSERT INTO job_queue.jobs_finished (${columns.join(', ')})
  SELECT ${values.join(', ')} FROM moved`;
};

/** The completion statement of a variant; none: the library's `finishJobs`. */
async function completionSql(client, completion) {
  if (completion === 'delete') return DELETE_COMPLETED;
  if (completion !== 'move') return undefined;
  for (const statement of FINISHED_TABLE) await client.query(statement);
  const { rows } = await client.query(
    `SELECT attname FROM pg_catalog.pg_attribute
     WHERE attrelid = 'job_queue.jobs'::regclass AND attnum > 0 AND NOT attisdropped
     ORDER BY attnum`,
  );
  return moveCompleted(rows.map((row) => row.attname));
}

const CLAIM_TYPES = {
  jobTypes: [TYPE],
  caps: [null],
  maxAttempts: [3],
  backoffBaseMs: [1000],
  backoffMaxMs: [60_000],
  backoffJitter: [0.1],
};

async function prepare(tag, { dropped, completion }) {
  const db = await createMigratedDatabase(tag);
  const client = new Client({ connectionString: db.url });
  await client.connect();
  for (const index of dropped) await client.query(`DROP INDEX job_queue.${index}`);
  const completing = await completionSql(client, completion);
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  // The statements' shape as a worker sees it: rows, not TypeORM's [rows, count].
  const queryable = { query: async (sql, values) => (await client.query(sql, values)).rows };
  const finishedTable = completion === 'move';
  return {
    ...db,
    client,
    pid,
    queryable,
    completing,
    finishedTable,
    claimCpu: [],
    completionCpu: [],
  };
}

async function fill(side) {
  await side.client.query('TRUNCATE job_queue.jobs CASCADE');
  if (side.finishedTable) await side.client.query('TRUNCATE job_queue.jobs_finished');
  await side.client.query(
    `INSERT INTO job_queue.jobs (job_type, data)
     SELECT $1, '{"n":1}'::jsonb FROM generate_series(1, $2::int)`,
    [TYPE, JOBS],
  );
  await side.client.query('VACUUM ANALYZE job_queue.jobs');
}

/** Claims and completes every job; the backend's CPU µs per job in the claims and completions. */
async function drain(side) {
  let claimMs = 0;
  let completionMs = 0;
  for (;;) {
    const beforeClaim = processCpuMs(side.pid);
    const { jobs } = await claimAndStartJobs(side.queryable, 'job_queue', 'w', CLAIM_TYPES, BATCH);
    const afterClaim = processCpuMs(side.pid);
    claimMs += afterClaim - beforeClaim;
    if (jobs.length === 0) break;
    if (side.completing) {
      await side.client.query(side.completing, [
        jobs.map((job) => job.id),
        jobs.map((job) => job.runToken),
      ]);
    } else {
      const outcomes = jobs.map((job) => ({
        id: job.id,
        runToken: job.runToken,
        status: 'completed',
        resultJson: null,
        lastError: null,
        retryDelayMs: null,
        progress: null,
        stage: null,
        logRows: [],
        logOutcome: false,
      }));
      await finishJobs(side.queryable, 'job_queue', 'w', outcomes);
    }
    completionMs += processCpuMs(side.pid) - afterClaim;
  }
  side.claimCpu.push((claimMs * 1000) / JOBS);
  side.completionCpu.push((completionMs * 1000) / JOBS);
}

async function main() {
  const sides = {};
  try {
    for (const [name, variant] of Object.entries(VARIANTS)) {
      const tag = name.replace(/[^a-z]+/g, '_').slice(0, 30);
      sides[name] = await prepare(`iwc_${tag}`, variant);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of Object.values(sides)) {
        await fill(side);
        await drain(side);
      }
    }
    // The backend's CPU is read in clock ticks (10 ms), coarse for one statement of a few ms;
    // summed over a round's 200 claims and 200 completions, the rounding evens out.
    console.log(`${JOBS} jobs claimed 500 at a time and completed, ${ROUNDS} rounds:`);
    console.log('database CPU µs per job, median (min-max) of the rounds');
    const cell = (values) => {
      const { median, min, max } = summarize(values);
      return `${median.toFixed(1)} (${min.toFixed(1)}-${max.toFixed(1)})`.padEnd(20);
    };
    console.log(`${''.padEnd(26)} ${'claim'.padEnd(20)} ${'completion'.padEnd(20)} both`);
    for (const [name, side] of Object.entries(sides)) {
      const both = side.claimCpu.map((claim, i) => claim + side.completionCpu[i]);
      console.log(
        `${name.padEnd(26)} ${cell(side.claimCpu)} ${cell(side.completionCpu)} ${cell(both)}`,
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

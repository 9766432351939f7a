'use strict';
// Cost of our claim of 10 (claim_job_batch, called as the worker calls it) as the table around
// the 10 ready jobs grows: a million finished rows, a million jobs of the same type due tomorrow,
// a million ready jobs of another type, or ten types claimed at once, each with a backlog; and for
// a type with a per-key concurrency limit, 10,000 keys, or one key at its limit with a million
// jobs behind it; a rate-limited type at its limit with a million jobs waiting, claimed beside
// the 10.
//
// Every call runs in a transaction that is rolled back, so each one claims the same 10 jobs from
// the same table. Each case has two databases: the case's, and a baseline holding nothing but
// the 10 ready jobs ("empty"); calls alternate between them (the order flips every round), so a
// noisy moment on the machine hits both, and `ratio` is median(case) / median(baseline) of the
// same minute. The `empty` case's baseline is a second empty database: its ratio is the noise
// floor. Client round trip of the claim statement alone (BEGIN and ROLLBACK are not timed).
const { Client } = require('pg');
const { nowMs } = require('../lib/timing');
const { median, percentile } = require('../lib/stats');
const { withPeerDatabase } = require('../lib/workload');
const { JOBS, claimStatement, qualified } = require('../lib/schema');

const BATCH = 10;
const WARMUP_CALLS = 10;
const CHUNK = 250_000;
const TYPE = 'bench.noop';
const OTHER_TYPE = 'bench.other';
const TEN_TYPES = Array.from({ length: 10 }, (_, i) => `bench.t${i}`);
const KEYED_TYPE = 'bench.keyed';
const KEYS = 10_000;
/** The keyed type's limit per key (`job_types.concurrency_per_key`). */
const PER_KEY = 2;

const RATED_TYPE = 'bench.rated';

/**
 * The rated type's rate limit (one start an hour), as a worker with `rateLimit` stores it, and
 * that one start made a minute ago: its window is full for the whole run.
 */
async function fillRateWindow(client) {
  await client.query(
    `INSERT INTO ${qualified('job_types')} (job_type, rate_max, rate_per_ms) VALUES ($1, 1, 3600000)`,
    [RATED_TYPE],
  );
  await client.query(
    `INSERT INTO ${qualified('job_rate_starts')} (job_type, rate_key, started_at, starts)
     VALUES ($1, '', now() - interval '1 minute', 1)`,
    [RATED_TYPE],
  );
}

/** The keyed type's per-key limit, as a worker with `concurrencyPerKey` stores it at boot. */
const setPerKeyLimit = (client) =>
  client.query(
    `INSERT INTO ${qualified('job_types')} (job_type, concurrency_per_key) VALUES ($1, $2)`,
    [KEYED_TYPE, PER_KEY],
  );

/** Ready keyed jobs, one per key `k0`…, as many keys as jobs. */
const insertReadyKeyed = (client, n) =>
  client.query(
    `INSERT INTO ${JOBS} (job_type, data, concurrency_key)
     SELECT $1, jsonb_build_object('i', g), 'k' || g FROM generate_series(1, $2) AS g`,
    [KEYED_TYPE, n],
  );

/**
 * Committed claims of the keyed type until none of its jobs is pending: the claims that meet a
 * busy key's backlog set it aside (a bounded part each), as a worker's claims would before the
 * ones that follow stop meeting it. Returns how many claims that took, and their ms.
 */
async function setAsideBacklog(client) {
  const t0 = nowMs();
  for (let claims = 1; ; claims++) {
    const { rows } = await client.query(claimStatement, ['bench-settler', [KEYED_TYPE], BATCH]);
    if (rows.length > 0) throw new Error(`the busy key's claim took ${rows.length} jobs`);
    const { rows: left } = await client.query(
      `SELECT count(*)::int AS n FROM ${JOBS} WHERE status = 'pending'`,
    );
    if (left[0].n === 0) return { claims, ms: nowMs() - t0 };
  }
}

/** `rows` rows of `columns` from generate_series (as `g`), in chunks; `values` a SELECT list. */
async function insertSeries(client, rows, columns, values, params = []) {
  for (let done = 0; done < rows; done += CHUNK) {
    const n = Math.min(CHUNK, rows - done);
    await client.query(
      `INSERT INTO ${JOBS} (${columns}) SELECT ${values} FROM generate_series(1, $1) AS g`,
      [n, ...params],
    );
  }
}

/** Ready jobs of `type`: pending, due now, default priority, inserted last. */
const insertReady = (client, type, n) =>
  client.query(
    `INSERT INTO ${JOBS} (job_type, data) SELECT $1, jsonb_build_object('i', g) FROM generate_series(1, $2) AS g`,
    [type, n],
  );

/**
 * What an enqueue with a delay writes as a job's status: `scheduled` where the table has that
 * status (a job due later waits out of the claim's index until staged), else `pending`.
 */
async function scheduledStatus(client) {
  const { rows } = await client.query(
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE conrelid = '${JOBS}'::regclass AND conname = 'jobs_status_check'`,
  );
  return /'scheduled'/.test(rows[0]?.def ?? '') ? 'scheduled' : 'pending';
}

const fills = {
  // Completed jobs as the worker leaves them: attempts 1, timestamps set, result null.
  finished: (client, rows) =>
    insertSeries(
      client,
      rows,
      `job_type, status, data, attempts, run_token, worker_id, claimed_at, started_at,
       completed_at, heartbeat_at, created_at, updated_at, run_at, result`,
      `$2, 'completed', jsonb_build_object('i', g), 1, 1, 'bench', now() - interval '1 hour',
       now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour',
       now() - interval '1 day', now() - interval '1 hour', now() - interval '1 day', 'null'::jsonb`,
      [TYPE],
    ),
  // Jobs of the claimed type due a day from now, enqueued an hour ago: ahead of the ready jobs
  // in the claim's order (priority, then created_at), as jobs scheduled earlier are. Their status
  // is the one the library's enqueue gives a job due later (see scheduledStatus).
  scheduled: async (client, rows) =>
    insertSeries(
      client,
      rows,
      'job_type, status, data, created_at, updated_at, run_at',
      `$2, $3, jsonb_build_object('i', g), now() - interval '1 hour', now() - interval '1 hour',
       now() + interval '1 day'`,
      [TYPE, await scheduledStatus(client)],
    ),
  // Jobs of the claimed type waiting for a running one (`dependsOn`: status `blocked`, one edge
  // each), enqueued an hour ago: ahead of the ready jobs in the claim's order.
  blocked: async (client, rows) => {
    const { rows: running } = await client.query(
      `INSERT INTO ${JOBS} (job_type, status, data, attempts, run_token, worker_id, claimed_at,
                            started_at, heartbeat_at, has_dependants)
       VALUES ($1, 'running', '{}', 1, 1, 'bench', now(), now(), now(), true) RETURNING id`,
      [TYPE],
    );
    await insertSeries(
      client,
      rows,
      `job_type, status, data, unfinished_dependencies, on_dependency_failure, created_at,
       updated_at`,
      `$2, 'blocked', jsonb_build_object('i', g), 1, 'fail', now() - interval '1 hour',
       now() - interval '1 hour'`,
      [TYPE],
    );
    await client.query(
      `INSERT INTO ${qualified('job_dependencies')} (dependency_id, job_id)
       SELECT $1, id FROM ${JOBS} WHERE status = 'blocked'`,
      [running[0].id],
    );
  },
  // Ready jobs of a type this claim does not ask for, enqueued an hour ago.
  otherType: (client, rows) =>
    insertSeries(
      client,
      rows,
      'job_type, data, created_at, updated_at, run_at',
      `$2, jsonb_build_object('i', g), now() - interval '1 hour', now() - interval '1 hour',
       now() - interval '1 hour'`,
      [OTHER_TYPE],
    ),
  // The keyed type's jobs over 10,000 keys, in turn (consecutive jobs have different keys).
  keys: async (client, rows) => {
    await setPerKeyLimit(client);
    await insertSeries(
      client,
      rows,
      'job_type, data, concurrency_key',
      `$2, jsonb_build_object('i', g), 'k' || (g % $3)`,
      [KEYED_TYPE, KEYS],
    );
  },
  // One key holding its slots (two running jobs) with `rows` jobs behind it, enqueued first.
  busyKey: async (client, rows) => {
    await setPerKeyLimit(client);
    await client.query(
      `INSERT INTO ${JOBS} (job_type, status, concurrency_key, worker_id, attempts, run_token,
                            claimed_at, started_at, heartbeat_at)
       SELECT $1, 'running', 'busy', 'bench', 1, 1, now(), now(), now()
       FROM generate_series(1, $2)`,
      [KEYED_TYPE, PER_KEY],
    );
    await insertSeries(
      client,
      rows,
      'job_type, data, concurrency_key, created_at',
      `$2, jsonb_build_object('i', g), 'busy', now() - interval '1 hour'`,
      [KEYED_TYPE],
    );
  },
  // Each of the ten types a backlog of rows / 10 ready jobs.
  tenTypes: async (client, rows) => {
    for (const type of TEN_TYPES) {
      await insertSeries(
        client,
        Math.floor(rows / TEN_TYPES.length),
        'job_type, data',
        `$2, jsonb_build_object('i', g)`,
        [type],
      );
    }
  },
};

const CASES = [
  {
    key: 'empty',
    label: () => `empty: ${BATCH} ready jobs alone`,
    types: [TYPE],
    fill: (client) => insertReady(client, TYPE, BATCH),
  },
  {
    key: 'finished',
    label: (cfg) => `${millions(cfg)} finished rows`,
    types: [TYPE],
    fill: async (client, rows) => {
      await fills.finished(client, rows);
      await insertReady(client, TYPE, BATCH);
    },
  },
  {
    key: 'scheduled',
    label: (cfg) => `${millions(cfg)} same-type jobs due in a day`,
    types: [TYPE],
    fill: async (client, rows) => {
      await fills.scheduled(client, rows);
      await insertReady(client, TYPE, BATCH);
    },
  },
  {
    key: 'blocked',
    label: (cfg) => `${millions(cfg)} same-type jobs blocked on a running one`,
    types: [TYPE],
    fill: async (client, rows) => {
      await fills.blocked(client, rows);
      await insertReady(client, TYPE, BATCH);
    },
  },
  {
    key: 'other-type',
    label: (cfg) => `${millions(cfg)} ready jobs of another type`,
    types: [TYPE],
    fill: async (client, rows) => {
      await fills.otherType(client, rows);
      await insertReady(client, TYPE, BATCH);
    },
  },
  {
    key: 'ten-types',
    label: (cfg) =>
      `10 types claimed, each a backlog of ${(cfg.claimRows / 10).toLocaleString('en')}`,
    types: TEN_TYPES,
    fill: (client, rows) => fills.tenTypes(client, rows),
    // Also timed against the same 10-type claim with one ready job per type and nothing behind.
    reference: {
      fill: async (client) => {
        for (const type of TEN_TYPES) await insertReady(client, type, 1);
      },
      types: TEN_TYPES,
    },
  },
  {
    key: 'keys',
    label: () =>
      `a type with concurrencyPerKey ${PER_KEY}: its backlog over ${KEYS.toLocaleString('en')} keys`,
    types: [KEYED_TYPE],
    fill: (client, rows) => fills.keys(client, Math.min(rows, 50 * KEYS)),
    // Also timed against the same claim with 10 ready jobs of 10 keys and nothing behind.
    reference: {
      fill: async (client) => {
        await setPerKeyLimit(client);
        await insertReadyKeyed(client, BATCH);
      },
      types: [KEYED_TYPE],
    },
  },
  {
    key: 'busy-key',
    label: (cfg) =>
      `a type with concurrencyPerKey ${PER_KEY}: one key at its limit with ${millions(cfg)} jobs behind it`,
    types: [KEYED_TYPE],
    fill: async (client, rows) => {
      await fills.busyKey(client, rows);
      const aside = await setAsideBacklog(client);
      await insertReadyKeyed(client, BATCH);
      return { 'claims that set the backlog aside': aside.claims, 'their ms': aside.ms };
    },
    reference: {
      fill: async (client) => {
        await setPerKeyLimit(client);
        await insertReadyKeyed(client, BATCH);
      },
      types: [KEYED_TYPE],
    },
  },
  {
    key: 'rate-limited',
    label: (cfg) =>
      `beside a rate-limited type at its limit with ${millions(cfg)} jobs waiting (both claimed)`,
    types: [TYPE, RATED_TYPE],
    fill: async (client, rows) => {
      await fillRateWindow(client);
      await insertSeries(client, rows, 'job_type, data', `$2, jsonb_build_object('i', g)`, [
        RATED_TYPE,
      ]);
      await insertReady(client, TYPE, BATCH);
    },
    // Also timed against the same two-type claim with the rated type's window full and nothing behind.
    reference: {
      fill: (client) => fillRateWindow(client),
      types: [TYPE, RATED_TYPE],
    },
  },
];

function millions(cfg) {
  return cfg.claimRows >= 1_000_000 && cfg.claimRows % 1_000_000 === 0
    ? `${cfg.claimRows / 1_000_000} M`
    : cfg.claimRows.toLocaleString('en');
}

/** One claim of BATCH in a transaction rolled back after; ms of the claim statement. */
async function timedClaim(client, types) {
  await client.query('BEGIN');
  try {
    const t0 = nowMs();
    const { rows } = await client.query(claimStatement, ['bench-claimer', types, BATCH]);
    const ms = nowMs() - t0;
    if (rows.length !== BATCH) throw new Error(`claimed ${rows.length} of ${BATCH}`);
    return ms;
  } finally {
    await client.query('ROLLBACK');
  }
}

async function connect(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

const runCase = (c) => ({
  key: c.key,
  label: c.label,
  async run({ peer, cfg }) {
    return withPeerDatabase(peer, `claim_${c.key}`, (db) =>
      withPeerDatabase(peer, `claim_${c.key}_base`, async (baseDb) => {
        const client = await connect(db.url);
        const base = await connect(baseDb.url);
        try {
          const fillNotes = await c.fill(client, cfg.claimRows);
          await insertReady(base, TYPE, BATCH);
          if (c.reference) await c.reference.fill(base);
          for (const each of [client, base]) await each.query(`VACUUM ANALYZE ${JOBS}`);

          // [connection, types, samples]: the case, the baseline, and the reference if any.
          const series = [
            { client, types: c.types, times: [] },
            { client: base, types: [TYPE], times: [] },
            ...(c.reference ? [{ client: base, types: c.reference.types, times: [] }] : []),
          ];
          for (let i = 0; i < WARMUP_CALLS + cfg.claimCalls; i++) {
            const order = i % 2 === 0 ? series : [...series].reverse();
            for (const s of order) {
              const ms = await timedClaim(s.client, s.types);
              if (i >= WARMUP_CALLS) s.times.push(ms);
            }
          }
          const [caseMs, baseMs, refMs] = series.map((s) => median(s.times));
          const { rows } = await client.query(
            `SELECT count(*)::int AS n, pg_size_pretty(pg_total_relation_size('${JOBS}')) AS size FROM ${JOBS}`,
          );
          return {
            'ms/claim of 10': caseMs,
            'empty ms': baseMs,
            'x empty': caseMs / baseMs,
            ...(refMs !== undefined && { 'x unloaded': caseMs / refMs }),
            extra: {
              rows: rows[0].n,
              tableSize: rows[0].size,
              ...(refMs !== undefined && { 'unloaded ms': refMs }),
              ...fillNotes,
              p90: percentile(series[0].times, 90),
            },
          };
        } finally {
          await client.end();
          await base.end();
        }
      }),
    );
  },
});

module.exports = {
  name: 'claim',
  title: (cfg) =>
    `claim_job_batch of ${BATCH} beside big tables: median of ${cfg.claimCalls} calls, each rolled back ` +
    `(ms, client round trip; goal: at most 1.2x empty)`,
  metrics: ['ms/claim of 10', 'empty ms', 'x empty', 'x unloaded'],
  only: ['ours'],
  cases: CASES.map(runCase),
};

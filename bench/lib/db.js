'use strict';
// Fresh databases: every measurement runs in a database created for it and dropped after.
const { Client } = require('pg');
const { databaseUrl } = require('./env');

let counter = 0;

async function withClient(url, fn) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const admin = (sql) => withClient(databaseUrl('postgres'), (c) => c.query(sql));

async function createDatabase(tag) {
  const name =
    `jqbench_${process.pid}_${++counter}_${tag.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`.slice(
      0,
      63,
    );
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  return { name, url: databaseUrl(name) };
}

const dropDatabase = (name) => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);

/**
 * Waits (at most `timeoutMs`) for the last connection to `name` to close: a library whose pool
 * ends a moment after its stop() resolves is not cut off by DROP DATABASE ... WITH (FORCE).
 */
async function waitForNoConnections(name, timeoutMs) {
  await withClient(databaseUrl('postgres'), async (client) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await client.query(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
}

/** Runs `fn({ name, url })` on a database of its own, dropped afterwards whatever happens. */
async function withFreshDatabase(tag, fn) {
  const db = await createDatabase(tag);
  try {
    return await fn(db);
  } finally {
    await waitForNoConnections(db.name, 3_000).catch(() => undefined);
    await dropDatabase(db.name).catch((error) =>
      console.error(`could not drop ${db.name}: ${error.message}`),
    );
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Drops databases that an earlier, killed run of this bench left behind (its pid is gone). */
async function dropLeftovers() {
  await withClient(databaseUrl('postgres'), async (client) => {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database WHERE datname LIKE 'jqbench\\_%'`,
    );
    for (const { datname } of rows) {
      const pid = Number(datname.split('_')[1]);
      if (pid && pid !== process.pid && alive(pid)) continue;
      await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  });
}

/**
 * The database's own counters (pg_stat_database): transactions, rows written and read. Taken
 * before and after a run, their difference says how much work the database did per job,
 * whichever library ran.
 */
async function databaseCounters(url, name) {
  return withClient(url, async (client) => {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query(
      `SELECT xact_commit::bigint AS xacts, tup_inserted::bigint AS inserted,
              tup_updated::bigint AS updated, tup_deleted::bigint AS deleted,
              tup_returned::bigint AS returned, tup_fetched::bigint AS fetched
         FROM pg_stat_database WHERE datname = $1`,
      [name],
    );
    return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
  });
}

module.exports = {
  withClient,
  createDatabase,
  dropDatabase,
  withFreshDatabase,
  dropLeftovers,
  databaseCounters,
};

'use strict';
// node bench/notify-wakeups.js: what a NOTIFY costs the database's listening sessions. 200
// statements each send one pg_notify on a channel nobody listens to, while one other session
// LISTENs on a different channel (as every worker's wake-up connection does) or while none does;
// the database's committed transactions are counted around them (from pg_stat_database, read
// after the sessions ended so that their counts are flushed). Rounds alternate. Not in CI.
const { Client } = require('pg');
const { createDatabase, dropDatabase } = require('./lib/db');

const STATEMENTS = 200;
const ROUNDS = 3;

async function committed(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query(
    `SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  await client.end();
  return Number(rows[0].n);
}

const settle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Transactions committed while `STATEMENTS` notifying statements run, beyond those statements. */
async function extraTransactions(url, listening) {
  const sender = new Client({ connectionString: url });
  const listener = new Client({ connectionString: url });
  await Promise.all([sender.connect(), listener.connect()]);
  if (listening) await listener.query('LISTEN bench_other_channel');
  await settle(1_500);
  const before = await committed(url);
  for (let i = 0; i < STATEMENTS; i++) {
    await sender.query(`SELECT pg_notify('bench_events_channel', 'x')`);
  }
  await Promise.all([sender.end(), listener.end()]);
  await settle(1_500);
  // The statements themselves, and the probe that read `before`, are not extra.
  return (await committed(url)) - before - 2 - STATEMENTS;
}

async function main() {
  const db = await createDatabase('notify_wakeups');
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const alone = await extraTransactions(db.url, false);
      const listened = await extraTransactions(db.url, true);
      console.log(
        `round ${round}: ${STATEMENTS} notifying statements, extra transactions committed: ` +
          `${alone} with no session listening, ${listened} with one listening on another channel`,
      );
    }
  } finally {
    await dropDatabase(db.name);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

'use strict';
// A fresh database with the library's migrations run, for the scripts that time its own
// statements on its schema (after `npm run build:lib`: the migrations come from dist).
const path = require('node:path');
const { createDatabase, dropDatabase } = require('./db');

const ROOT = path.join(__dirname, '..', '..');

/** `{ name, url }` of a new database whose `job_queue` schema is migrated to the latest. */
async function createMigratedDatabase(tag) {
  const { DataSource } = require(require.resolve('typeorm', { paths: [ROOT] }));
  const { jobQueueMigrations } = require(path.join(ROOT, 'libs/job-queue/dist'));
  const db = await createDatabase(tag);
  const dataSource = new DataSource({
    type: 'postgres',
    url: db.url,
    migrations: jobQueueMigrations,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
  return db;
}

/**
 * The clean-up of a script's databases: each `{ name, client }` has its connection ended and its
 * database dropped, whatever failed before (a failure here is not the script's result).
 */
async function dropMigratedDatabases(databases) {
  for (const { name, client } of databases) {
    await client?.end().catch(() => undefined);
    await dropDatabase(name).catch(() => undefined);
  }
}

module.exports = { createMigratedDatabase, dropMigratedDatabases };

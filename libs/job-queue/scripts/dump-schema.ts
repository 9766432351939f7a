import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  createMigratedTemplate,
  withAdminClient,
  withDatabase,
} from '../../../test/support/database';
import { startTestPostgres } from '../../../test/support/postgres-server';
import { DEFAULT_SCHEMA } from '../src/job-queue.constants';
import { readSchemaDump, SCHEMA_DUMP_FILE } from './schema-dump';

/**
 * `npm run schema:dump`: migrates a scratch database on the tests' server (DATABASE_URL, else
 * testcontainers, else embedded PostgreSQL), reads what the migrations installed and writes it to
 * libs/job-queue/schema.sql, then drops the database.
 */
async function main(): Promise<void> {
  const server = await startTestPostgres();
  const database = `jq_schema_dump_${process.pid}`;
  try {
    await createMigratedTemplate(server.url, database);
    const client = new Client({ connectionString: withDatabase(server.url, database) });
    await client.connect();
    let dump: string;
    try {
      dump = await readSchemaDump(client, DEFAULT_SCHEMA);
    } finally {
      await client.end();
    }
    const file = join(__dirname, '..', SCHEMA_DUMP_FILE);
    writeFileSync(file, dump);
    process.stdout.write(`Wrote ${file} (${server.source})\n`);
  } finally {
    // The name is ours (a pid), never input: an identifier cannot be a bind parameter.
    await withAdminClient(server.url, (client) =>
      client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    );
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});

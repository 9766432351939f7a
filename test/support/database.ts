import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
// Relative, not the package name: Jest's globalSetup loads this file without moduleNameMapper.
import { jobQueueMigrations } from '../../libs/job-queue/src/migrations';

/** Set by globalSetup for every test worker. */
export const SERVER_URL_ENV = 'JOB_QUEUE_TEST_SERVER_URL';
export const TEMPLATE_DB_ENV = 'JOB_QUEUE_TEST_TEMPLATE_DB';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function withAdminClient<T>(serverUrl: string, fn: (client: Client) => Promise<T>) {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates `name` on the server and runs every job-queue migration in it. */
export async function createMigratedTemplate(serverUrl: string, name: string): Promise<void> {
  await withAdminClient(serverUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}" TEMPLATE template0`);
  });
  const dataSource = new DataSource({
    type: 'postgres',
    url: withDatabase(serverUrl, name),
    migrations: jobQueueMigrations,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file: a copy of the migrated template, or an empty one
 * (`migrated: false`) for migration tests. Drop it in afterAll.
 */
export async function createTestDatabase({ migrated = true } = {}): Promise<TestDatabase> {
  const serverUrl = process.env[SERVER_URL_ENV];
  const template = migrated ? process.env[TEMPLATE_DB_ENV] : 'template0';
  if (!serverUrl || !template) {
    throw new Error(`${SERVER_URL_ENV} is unset: run the tests through jest (globalSetup).`);
  }
  const name = `jq_test_${randomBytes(6).toString('hex')}`;
  // Names are ours (hex), never user input: identifiers cannot be bind parameters.
  await withAdminClient(serverUrl, (client) =>
    client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`),
  );
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: () =>
      withAdminClient(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      ).then(() => undefined),
  };
}

import { createMigratedTemplate, SERVER_URL_ENV, TEMPLATE_DB_ENV } from './database';
import { startTestPostgres, TestPostgresServer } from './postgres-server';

declare global {
  var __JOB_QUEUE_TEST_SERVER__: TestPostgresServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  const server = await startTestPostgres();
  globalThis.__JOB_QUEUE_TEST_SERVER__ = server;
  const template = `jq_template_${process.pid}`;
  await createMigratedTemplate(server.url, template);
  // Test workers are forked after this and inherit the environment.
  process.env[SERVER_URL_ENV] = server.url;
  process.env[TEMPLATE_DB_ENV] = template;
  process.stdout.write(`\nPostgreSQL for tests: ${server.source}\n`);
}

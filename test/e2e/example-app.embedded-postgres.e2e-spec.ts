import { ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { embeddedPostgresUrl, findFreePort } from '../../tools/dev-postgres';

const REPO_ROOT = resolve(__dirname, '..', '..');
const PASSWORD_FILE = 'embedded-superuser-password';

/**
 * `npm start`'s embedded server (tools/dev-postgres) in a process of its own
 * (test/fixtures/postgres-process.ts: Jest's sandbox cannot import the binaries' ES module),
 * driven over stdin: `start` answers `ready`, `stop` answers `stopped`, a failure `error …`.
 */
class ServerProcess {
  private readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];
  private readonly exited: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((done) => child.once('exit', () => done()));
    void this.exited.then(() => this.wake());
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      this.wake();
    });
    child.stderr!.resume();
  }

  static spawn(dataDir: string, port: number): ServerProcess {
    return new ServerProcess(
      spawn(
        process.execPath,
        [
          '-r',
          'ts-node/register/transpile-only',
          'test/fixtures/postgres-process.ts',
          dataDir,
          String(port),
        ],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, TS_NODE_PROJECT: resolve(REPO_ROOT, 'tsconfig.json') },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      ),
    );
  }

  private wake(): void {
    this.waiters.splice(0).forEach((wake) => wake());
  }

  /** The next line it prints: `ready`, `stopped` or `error <message>`. */
  async next(): Promise<string> {
    while (this.lines.length === 0) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error('postgres-process exited');
      }
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    return this.lines.shift()!;
  }

  async send(command: 'start' | 'stop'): Promise<string> {
    this.child.stdin!.write(`${command}\n`);
    return this.next();
  }

  /** Stops the server and ends the process. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.exited;
  }
}

/** Whether the superuser logs in with `password`; false when the server says it is wrong. */
async function logsIn(port: number, password: string): Promise<boolean> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The embedded server `npm start` runs (and the tests' last resort) no longer has the fixed
 * superuser password 'postgres', which anyone on the machine could use: initdb gets a random one,
 * kept in a file of the cluster only its owner can read, and read back at every start. A cluster
 * made with the fixed one keeps its data and gets a random password at its next start.
 */
describe('example app: the embedded PostgreSQL password', () => {
  let parent: string;
  let dataDir: string;
  let passwordFile: string;
  let port: number;
  let server: ServerProcess;

  const password = () => readFileSync(passwordFile, 'utf8').trim();

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'job-queue-embedded-password-'));
    // As root, the server runs as an account of its own that must be able to reach its data folder.
    chmodSync(parent, 0o755);
    dataDir = join(parent, 'pg');
    passwordFile = join(dataDir, PASSWORD_FILE);
    port = await findFreePort();
    server = ServerProcess.spawn(dataDir, port);
    expect(await server.next()).toBe('ready');
  });

  afterAll(async () => {
    await server?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it('makes a random password at initdb, in a file of the cluster only its owner can read', async () => {
    const file = statSync(passwordFile);
    expect(file.mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(file.uid).toBe(statSync(dataDir).uid); // the server's user (as root: `postgres`)
    expect(password()).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(await logsIn(port, password())).toBe(true);
    expect(await logsIn(port, 'postgres')).toBe(false);
  });

  it('gives the app a URL with that password', async () => {
    const url = embeddedPostgresUrl(dataDir, port);
    expect(url).toBe(`postgres://postgres:${password()}@127.0.0.1:${port}/postgres`);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.end();
  });

  it('reads the same password back after a restart', async () => {
    const before = password();
    expect(await server.send('stop')).toBe('stopped');
    expect(await server.send('start')).toBe('ready');
    expect(password()).toBe(before);
    expect(await logsIn(port, before)).toBe(true);
  });

  it('gives a cluster made with the fixed password a random one, its data kept', async () => {
    // Such a cluster: the superuser's password is 'postgres' and there is no password file.
    const client = new Client({ connectionString: embeddedPostgresUrl(dataDir, port) });
    await client.connect();
    await client.query(`CREATE TABLE kept AS SELECT 'from before' AS note`);
    await client.query(`ALTER ROLE postgres PASSWORD 'postgres'`);
    await client.end();
    const before = password();
    expect(await server.send('stop')).toBe('stopped');
    unlinkSync(passwordFile);
    expect(embeddedPostgresUrl(dataDir, port)).toContain('postgres:postgres@');

    expect(await server.send('start')).toBe('ready');
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    expect(password()).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(password()).not.toBe(before);
    expect(await logsIn(port, 'postgres')).toBe(false);
    const after = new Client({ connectionString: embeddedPostgresUrl(dataDir, port) });
    await after.connect();
    const { rows } = await after.query('SELECT note FROM kept');
    await after.end();
    expect(rows).toEqual([{ note: 'from before' }]);
  });

  it('refuses to start, in one line and with no server left, when no password logs in', async () => {
    const kept = password();
    expect(await server.send('stop')).toBe('stopped');
    writeFileSync(passwordFile, 'not-the-password\n');
    try {
      const answer = await server.send('start');
      expect(answer).toMatch(/^error The embedded PostgreSQL in .* refuses the password in /);
      expect(existsSync(join(dataDir, 'postmaster.pid'))).toBe(false);
    } finally {
      writeFileSync(passwordFile, `${kept}\n`);
    }
    expect(await server.send('start')).toBe('ready');
    expect(await logsIn(port, kept)).toBe(true);
  });
});

import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { embeddedPostgresUrl, findFreePort } from '../../tools/dev-postgres';
import { createMigratedTemplate, withDatabase } from './database';

const REPO_ROOT = resolve(__dirname, '..', '..');
const SERVER_SCRIPT = 'test/fixtures/postgres-process.ts';
const START_TIMEOUT_MS = 60_000;

/**
 * A PostgreSQL server of one test's own (embedded, in a temp dir, on a free port), for tests that
 * stop and restart the database: the machine's shared server is never touched. The server runs
 * under test/fixtures/postgres-process.ts, which this drives over stdin.
 */
export class OwnPostgres {
  private up = false;
  private readonly waiters: Array<{
    line: string;
    resolve: () => void;
    reject: (e: Error) => void;
  }> = [];
  private readonly exited: Promise<void>;

  private constructor(
    private readonly parent: string,
    private readonly port: number,
    private readonly database: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolveExit) => child.once('exit', () => resolveExit()));
    void this.exited.then(() => this.failWaiters(new Error('postgres-process exited')));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('error ')) return this.failWaiters(new Error(line.slice(6)));
      const index = this.waiters.findIndex((waiter) => waiter.line === line);
      if (index >= 0) this.waiters.splice(index, 1)[0].resolve();
    });
    child.stderr!.resume();
  }

  /** Initialises a cluster, starts it and creates `database` with every migration run. */
  static async start(database = 'job_queue'): Promise<OwnPostgres> {
    const parent = mkdtempSync(join(tmpdir(), 'job-queue-own-pg-'));
    // As root, the server runs as an account of its own that must be able to reach its data folder.
    chmodSync(parent, 0o755);
    const port = await findFreePort();
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', SERVER_SCRIPT, join(parent, 'pg'), String(port)],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, TS_NODE_PROJECT: resolve(REPO_ROOT, 'tsconfig.json') },
        // stdin stays open: the server stops when it closes (this process is gone).
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const own = new OwnPostgres(parent, port, database, child);
    try {
      await own.expect('ready');
      own.up = true;
      await createMigratedTemplate(own.serverUrl, database);
      return own;
    } catch (error) {
      await own.destroy();
      throw error;
    }
  }

  /** The cluster's data folder. */
  get dataDir(): string {
    return join(this.parent, 'pg');
  }

  /** The server (same port across restarts). */
  get serverUrl(): string {
    return embeddedPostgresUrl(this.dataDir, this.port);
  }

  /** The migrated database tests use. */
  get url(): string {
    return withDatabase(this.serverUrl, this.database);
  }

  get running(): boolean {
    return this.up;
  }

  /** Fast shutdown: every session is terminated, new connections are refused. */
  async stop(): Promise<void> {
    if (!this.up) return;
    this.up = false;
    await this.command('stop', 'stopped');
  }

  /** Starts the server again on the same data and port; resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.up) return;
    await this.command('start', 'ready');
    this.up = true;
  }

  /** Stops the server, ends its process and deletes the data. */
  async destroy(): Promise<void> {
    this.up = false;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin!.end();
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await this.exited;
      clearTimeout(killer);
    }
    rmSync(this.parent, { recursive: true, force: true });
  }

  private async command(command: string, reply: string): Promise<void> {
    const answered = this.expect(reply);
    this.child.stdin!.write(`${command}\n`);
    await answered;
  }

  private expect(line: string): Promise<void> {
    return new Promise<void>((resolveLine, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`postgres-process: no "${line}" within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      this.waiters.push({
        line,
        resolve: () => {
          clearTimeout(timer);
          resolveLine();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  private failWaiters(error: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}

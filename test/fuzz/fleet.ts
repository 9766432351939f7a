/**
 * The worker processes of a fuzz run: spawned, restarted with other handler options (a deploy),
 * SIGKILLed, stopped and started through `JobWorker`, and their connections terminated. Each
 * process's connections carry the `application_name` `fuzz-worker <n>` (its pool) or
 * `nest-pg-job-queue … fuzz-<n>-…` (its dedicated LISTEN/events connections, named by the
 * library after the worker id), so a fault never touches the driver's own connections.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import type { JobHandlerOptions } from 'nest-pg-job-queue';
import type { FuzzWorkerConfig } from './fuzz-types';

const REPO_ROOT = resolve(__dirname, '..', '..');
const SCRIPT = 'test/fuzz/fuzz-worker.ts';
const BOOT_TIMEOUT_MS = 60_000;

/** Kill what is left if the driver itself dies. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

class FuzzWorker {
  private readonly lines = new Set<(line: string) => void>();
  private tail: string[] = [];
  readonly exited: Promise<void>;

  constructor(
    readonly config: FuzzWorkerConfig,
    readonly child: ChildProcess,
  ) {
    live.add(child);
    this.exited = new Promise((done) =>
      child.once('exit', () => {
        live.delete(child);
        for (const wake of this.lines) wake('');
        done();
      }),
    );
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.tail.push(line);
        if (this.tail.length > 40) this.tail.shift();
        for (const wake of this.lines) wake(line);
      });
    }
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.tail.join('\n');
  }

  /** Resolves when the process prints `line`; rejects when it exits first or after `timeoutMs`. */
  waitForLine(line: string, timeoutMs = BOOT_TIMEOUT_MS): Promise<void> {
    return new Promise<void>((done, fail) => {
      const timer = setTimeout(
        () => finish(new Error(`no "${line}" within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = (seen: string) => {
        if (seen.trim() === line) finish();
        else if (!this.alive) finish(new Error(`exited before "${line}"`));
      };
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.lines.delete(check);
        if (error)
          fail(
            new Error(`${this.config.workerId}: ${error.message}. Its output:\n${this.output()}`),
          );
        else done();
      };
      this.lines.add(check);
      if (!this.alive) check('');
    });
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.alive) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export class Fleet {
  private readonly workers: FuzzWorker[] = [];
  private generation = 0;
  /** The handler options a process boots with now: each deploy changes one type's. */
  readonly handlers: Record<string, JobHandlerOptions>;

  constructor(
    private readonly databaseUrl: string,
    readonly size: number,
    handlers: Record<string, JobHandlerOptions>,
    private readonly staleAfterMs: number,
  ) {
    this.handlers = structuredClone(handlers);
  }

  async start(): Promise<void> {
    for (let slot = 0; slot < this.size; slot++) this.workers[slot] = this.spawn(slot);
    await Promise.all(
      this.workers.map((worker) => worker.waitForLine(`ready ${worker.config.workerId}`)),
    );
  }

  /** The slot `n` picks (any natural number). */
  slot(n: number): number {
    return n % this.size;
  }

  /** SIGKILL the process in `slot`, then boot a new one there with today's handler options. */
  async restart(slot: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<string> {
    await this.workers[slot].kill(signal);
    this.workers[slot] = this.spawn(slot);
    const worker = this.workers[slot];
    await worker.waitForLine(`ready ${worker.config.workerId}`);
    return worker.config.workerId;
  }

  /** `JobWorker.stop()`, then `start()` after `stoppedMs`. */
  async stopStart(slot: number, stoppedMs: number): Promise<void> {
    const worker = this.workers[slot];
    worker.send('stop');
    await worker.waitForLine(`stopped ${worker.config.workerId}`, 30_000);
    await new Promise((done) => setTimeout(done, stoppedMs));
    worker.send('start');
    await worker.waitForLine(`started ${worker.config.workerId}`, 30_000);
  }

  workerId(slot: number): string {
    return this.workers[slot].config.workerId;
  }

  /** The `application_name` patterns (LIKE) of the connections of the process in `slot`. */
  connectionPatterns(slot: number): string[] {
    const { workerId, applicationName } = this.workers[slot].config;
    return [applicationName, `nest-pg-job-queue % ${workerId}%`];
  }

  /** Every process alive: a crashed one is the run's failure, with its output. */
  checkAlive(): void {
    for (const worker of this.workers) {
      if (!worker.alive) {
        throw new Error(`worker process ${worker.config.workerId} died:\n${worker.output()}`);
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker?.kill('SIGKILL')));
  }

  private spawn(slot: number): FuzzWorker {
    const workerId = `fuzz-${slot}-g${++this.generation}`;
    const config: FuzzWorkerConfig = {
      databaseUrl: this.databaseUrl,
      workerId,
      applicationName: `fuzz-worker ${workerId}`,
      concurrency: 4,
      staleAfterMs: this.staleAfterMs,
      handlers: this.handlers,
    };
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', SCRIPT],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(REPO_ROOT, 'tsconfig.json'),
          TS_NODE_TRANSPILE_ONLY: 'true',
          NO_COLOR: '1',
          FUZZ_WORKER: JSON.stringify(config),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    return new FuzzWorker(config, child);
  }
}

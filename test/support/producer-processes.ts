import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { JobOptions } from 'nest-pg-job-queue';

const REPO_ROOT = join(__dirname, '..', '..');
const PRODUCER_SCRIPT = join('test', 'fixtures', 'enqueue-process.ts');

/** One item's result, as `test/fixtures/enqueue-process.ts` reports it. */
export interface ProducedItem {
  producer: string;
  call: number;
  item: number;
  outcome: 'created' | 'replaced' | 'skipped';
  id: string;
  data: { producer: string; call: number; item: number };
  /** The call's transaction id, with `inTransaction` (32-bit, as `xmin` shows it). */
  txid?: string;
}

/** One producer process: the lines it printed, and a way to wait for the next one. */
class Producer {
  private buffer = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;
  stderr = '';

  constructor(
    readonly id: string,
    readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      let end: number;
      while ((end = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 1);
      }
      this.wake?.();
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on('exit', () => this.wake?.());
  }

  /** The next line starting with `prefix`, within `timeoutMs`. */
  async nextLine(prefix: string, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.lines.findIndex((line) => line.startsWith(prefix));
      if (index !== -1) return this.lines.splice(index, 1)[0].slice(prefix.length);
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`producer ${this.id}: no "${prefix}" line; stderr: ${this.stderr}`);
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  }
}

/**
 * Producer processes (`test/fixtures/enqueue-process.ts`), each an enqueue-only app of its own:
 * `round` has all of them run the same enqueues at once and returns every item's result.
 */
export class ProducerProcesses {
  private readonly producers: Producer[];

  constructor(databaseUrl: string, count: number) {
    this.producers = Array.from({ length: count }, (_, n) => {
      const id = `producer-${n + 1}`;
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', PRODUCER_SCRIPT],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, PRODUCER_DATABASE_URL: databaseUrl, PRODUCER_ID: id },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      return new Producer(id, child);
    });
  }

  async ready(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.producers.map((producer) => producer.nextLine('ready', timeoutMs)));
  }

  /**
   * Every producer runs `calls` enqueues (of `batch` items, 0: `enqueueWithOutcome`) at once,
   * each in a transaction of its own with `inTransaction`.
   */
  async round(
    calls: number,
    batch: number,
    options: JobOptions,
    { inTransaction = false, timeoutMs = 60_000 } = {},
  ): Promise<ProducedItem[]> {
    const line = `${JSON.stringify({ calls, batch, options, inTransaction })}\n`;
    for (const producer of this.producers) producer.child.stdin?.write(line);
    const results = await Promise.all(
      this.producers.map(async (producer) =>
        (JSON.parse(await producer.nextLine('result ', timeoutMs)) as ProducedItem[]).map(
          (item) => ({ ...item, producer: producer.id }),
        ),
      ),
    );
    return results.flat();
  }

  /** Closes their stdin (they exit) and waits for them to be gone. */
  async close(): Promise<void> {
    await Promise.all(
      this.producers.map(
        (producer) =>
          new Promise<void>((resolve) => {
            if (producer.child.exitCode !== null) return resolve();
            producer.child.on('exit', () => resolve());
            producer.child.stdin?.end();
            setTimeout(() => producer.child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  }
}

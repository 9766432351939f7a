import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** Environment variables `test/fixtures/worker-process.ts` reads. */
export const WORKER_ENV = {
  databaseUrl: 'WORKER_DATABASE_URL',
  workerId: 'WORKER_ID',
  concurrency: 'WORKER_CONCURRENCY',
  pollIntervalMs: 'WORKER_POLL_INTERVAL_MS',
  staleAfterMs: 'WORKER_STALE_AFTER_MS',
  heartbeatIntervalMs: 'WORKER_HEARTBEAT_INTERVAL_MS',
  reaperIntervalMs: 'WORKER_REAPER_INTERVAL_MS',
  shutdownTimeoutMs: 'WORKER_SHUTDOWN_TIMEOUT_MS',
  /** First attempt of the `slow` handler: a number of ms, or `until-aborted`. Default 0. */
  slowMs: 'WORKER_SLOW_MS',
  /** When set, the worker also has the `cron.tick` handler, on this cron expression. */
  cron: 'WORKER_CRON',
  /** `worker.prefetch`. */
  prefetch: 'WORKER_PREFETCH',
  /** `worker.jobTypes`, comma-separated (default: every handler's type). */
  jobTypes: 'WORKER_JOB_TYPES',
  /**
   * The `blocking` handler blocks the event loop (a synchronous wait) until this file exists:
   * nothing else of the process runs meanwhile, timers and heartbeats included.
   */
  blockUntilFile: 'WORKER_BLOCK_UNTIL_FILE',
  /** `events.remote`: `true` to notify other processes of this worker's job events. */
  remoteEvents: 'WORKER_REMOTE_EVENTS',
  /** `true`: the worker also has the `limits.*` handlers (concurrency limits, see the fixture). */
  limits: 'WORKER_LIMITS',
  /** `true`: the worker also has the `flow.*` handlers (test/fixtures/flow.handlers.ts). */
  flows: 'WORKER_FLOWS',
} as const;

/** The worker prints this followed by its id once it is claiming jobs. */
export const READY_LINE_PREFIX = 'ready ';

/** The `job_runs` side table the fixture's handlers write one row per attempt to. */
export const CREATE_JOB_RUNS_TABLE = `
  CREATE TABLE job_runs (
    id         bigserial PRIMARY KEY,
    job_id     bigint NOT NULL,
    worker_id  varchar(255) NOT NULL,
    attempt    integer NOT NULL,
    run_token  integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

/**
 * The `run_log` side table the fixture's `fenced` handler writes to: one row per event of each
 * run, the run named by the job's fencing token and a nonce of the run's own.
 */
export const CREATE_RUN_LOG_TABLE = `
  CREATE TABLE run_log (
    id         bigserial PRIMARY KEY,
    job_id     bigint NOT NULL,
    run_token  integer NOT NULL,
    nonce      text NOT NULL,
    event      text NOT NULL CHECK (event IN ('started', 'finished')),
    aborted    boolean NOT NULL DEFAULT false,
    worker_id  varchar(255) NOT NULL,
    at         timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

/**
 * The `limit_runs` side table the fixture's `limits.*` handlers write one row per attempt to:
 * its start and end on the database's clock, so overlaps are measured there, not in a process.
 */
export const CREATE_LIMIT_RUNS_TABLE = `
  CREATE TABLE limit_runs (
    id              bigserial PRIMARY KEY,
    job_id          bigint NOT NULL,
    job_type        text NOT NULL,
    concurrency_key text,
    attempt         integer NOT NULL,
    worker_id       text NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at     timestamptz
  )`;

/**
 * The most attempts of `jobType` in `limit_runs` that overlap at once, per key (`perKey`) or
 * across the type (key ''): at each attempt's start, the attempts started by then and not
 * finished yet (an attempt that never finished overlaps none).
 */
export async function mostOverlappingRuns(
  db: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
  jobType: string,
  perKey: boolean,
): Promise<Map<string, number>> {
  const rows = (await db.query(
    `SELECT COALESCE(CASE WHEN $2 THEN r.concurrency_key END, '') AS key, max(o.n)::int AS most
     FROM limit_runs r CROSS JOIN LATERAL (
       SELECT count(*) AS n FROM limit_runs x
       WHERE x.job_type = r.job_type
         AND (NOT $2 OR x.concurrency_key IS NOT DISTINCT FROM r.concurrency_key)
         AND x.started_at <= r.started_at AND x.finished_at > r.started_at
     ) AS o
     WHERE r.job_type = $1
     GROUP BY 1`,
    [jobType, perKey],
  )) as Array<{ key: string; most: number }>;
  return new Map(rows.map((row) => [row.key, row.most]));
}

/**
 * The `flow_runs` side table the fixture's `flow.*` handlers write one row per attempt to: its
 * start on the database's clock, and for a merge the step names of the dependencies
 * `ctx.dependencyResults()` gave it and those of them that did not complete (`failed`).
 */
export const CREATE_FLOW_RUNS_TABLE = `
  CREATE TABLE flow_runs (
    id         bigserial PRIMARY KEY,
    job_id     bigint NOT NULL,
    step_name  text,
    job_type   text NOT NULL,
    attempt    integer NOT NULL,
    worker_id  text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    seen_steps text[],
    failed     jsonb
  )`;

const REPO_ROOT = resolve(__dirname, '..', '..');
const WORKER_SCRIPT = 'test/fixtures/worker-process.ts';
const OUTPUT_LIMIT = 64 * 1024;

export interface WorkerProcessConfig {
  /** The test database (`createTestDatabase().url`). */
  databaseUrl: string;
  workerId: string;
  concurrency?: number;
  pollIntervalMs?: number;
  staleAfterMs?: number;
  heartbeatIntervalMs?: number;
  reaperIntervalMs?: number;
  shutdownTimeoutMs?: number;
  slowMs?: number | 'until-aborted';
  /** A cron expression for the fixture's `cron.tick` handler; without it there is no such handler. */
  cron?: string;
  prefetch?: number;
  jobTypes?: string[];
  /** See `WORKER_ENV.blockUntilFile`. */
  blockUntilFile?: string;
  /** `events.remote` (default: the module's, off). */
  remoteEvents?: boolean;
  /** With the `limits.*` handlers. */
  limits?: boolean;
  /** With the `flow.*` handlers. */
  flows?: boolean;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Every child still alive in this process, whichever `ChildWorkers` spawned it. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort: if the test process exits with children alive, kill them (synchronously). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of liveChildren) child.kill('SIGKILL');
  });
}

/** One worker process: its output, readiness and exit. */
export class WorkerProcess {
  /** Settles when the process has exited, with its code or the signal that ended it. */
  readonly exited: Promise<WorkerExit>;
  private output = '';
  private ready = false;
  private readonly readyWaiters = new Set<() => void>();

  constructor(
    readonly workerId: string,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise<WorkerExit>((resolveExit) => {
      child.once('exit', (code, signal) => {
        liveChildren.delete(child);
        resolveExit({ code, signal });
        for (const wake of this.readyWaiters) wake();
      });
    });
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.append(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (lines.some((line) => line.trim() === `${READY_LINE_PREFIX}${workerId}`)) {
        this.ready = true;
        for (const wake of this.readyWaiters) wake();
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.append(chunk));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Not exited yet (a signal may be on its way). */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The end of what the process wrote on stdout and stderr, for failure messages. */
  outputTail(chars = 4_000): string {
    return this.output.slice(-chars);
  }

  /** Resolves once the worker printed its ready line; fails on exit or after `timeoutMs`. */
  async waitUntilReady(timeoutMs = 30_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let wake: (() => void) | undefined;
    try {
      await new Promise<void>((resolveReady, reject) => {
        const check = () => {
          if (this.ready) resolveReady();
          else if (!this.alive) {
            reject(this.failure(`exited before it was ready (${this.describeExit()})`));
          }
        };
        wake = check;
        this.readyWaiters.add(check);
        timer = setTimeout(
          () => reject(this.failure(`was not ready within ${timeoutMs} ms`)),
          timeoutMs,
        );
        check();
      });
    } finally {
      clearTimeout(timer);
      if (wake) this.readyWaiters.delete(wake);
    }
  }

  /** Sends `signal` (no-op once exited). */
  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /**
   * Sends `signal` and waits for the exit; past `timeoutMs` it kills with SIGKILL and fails, so a
   * worker that ignores SIGTERM can neither hang the test nor outlive it.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<WorkerExit> {
    this.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolveTimeout) => {
      timer = setTimeout(() => resolveTimeout('timeout'), timeoutMs);
    });
    try {
      const result = await Promise.race([this.exited, timedOut]);
      if (result !== 'timeout') return result;
    } finally {
      clearTimeout(timer);
    }
    this.kill('SIGKILL');
    await this.exited;
    throw this.failure(`did not exit within ${timeoutMs} ms of ${signal}`);
  }

  private describeExit(): string {
    return this.child.signalCode
      ? `signal ${this.child.signalCode}`
      : `exit code ${this.child.exitCode}`;
  }

  private failure(what: string): Error {
    return new Error(
      `Worker process ${this.workerId} (pid ${this.pid}) ${what}. Its output:\n${this.outputTail()}`,
    );
  }

  private append(chunk: string): void {
    this.output += chunk;
    if (this.output.length > OUTPUT_LIMIT) this.output = this.output.slice(-OUTPUT_LIMIT);
  }
}

/**
 * Spawns worker processes (`test/fixtures/worker-process.ts` through ts-node) and keeps track
 * of them: call `killAll()` in `afterAll` so none outlives its test file, whatever failed.
 */
export class ChildWorkers {
  private readonly workers: WorkerProcess[] = [];

  spawn(config: WorkerProcessConfig): WorkerProcess {
    installExitHook();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TS_NODE_PROJECT: resolve(REPO_ROOT, 'tsconfig.json'),
      TS_NODE_TRANSPILE_ONLY: 'true',
      // Plain log lines in `outputTail()` (Nest's logger honours NO_COLOR).
      NO_COLOR: '1',
      [WORKER_ENV.databaseUrl]: config.databaseUrl,
      [WORKER_ENV.workerId]: config.workerId,
    };
    const optional: Array<[string, number | string | undefined]> = [
      [WORKER_ENV.concurrency, config.concurrency],
      [WORKER_ENV.pollIntervalMs, config.pollIntervalMs],
      [WORKER_ENV.staleAfterMs, config.staleAfterMs],
      [WORKER_ENV.heartbeatIntervalMs, config.heartbeatIntervalMs],
      [WORKER_ENV.reaperIntervalMs, config.reaperIntervalMs],
      [WORKER_ENV.shutdownTimeoutMs, config.shutdownTimeoutMs],
      [WORKER_ENV.slowMs, config.slowMs],
      [WORKER_ENV.cron, config.cron],
      [WORKER_ENV.prefetch, config.prefetch],
      [WORKER_ENV.jobTypes, config.jobTypes?.join(',')],
      [WORKER_ENV.blockUntilFile, config.blockUntilFile],
      [
        WORKER_ENV.remoteEvents,
        config.remoteEvents === undefined ? undefined : String(config.remoteEvents),
      ],
      [WORKER_ENV.limits, config.limits ? 'true' : undefined],
      [WORKER_ENV.flows, config.flows ? 'true' : undefined],
    ];
    for (const [name, value] of optional) {
      if (value === undefined) delete env[name];
      else env[name] = String(value);
    }
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', WORKER_SCRIPT],
      // stdin stays a pipe nobody writes to: the child exits when it closes (we died).
      { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    liveChildren.add(child);
    const worker = new WorkerProcess(config.workerId, child);
    this.workers.push(worker);
    return worker;
  }

  /** Spawns all at once (they boot in parallel) and waits until each is ready. */
  async spawnReady(configs: WorkerProcessConfig[], timeoutMs = 30_000): Promise<WorkerProcess[]> {
    const workers = configs.map((config) => this.spawn(config));
    await Promise.all(workers.map((worker) => worker.waitUntilReady(timeoutMs)));
    return workers;
  }

  /** SIGKILLs every worker still alive and waits for all of them to be gone. */
  async killAll(): Promise<void> {
    for (const worker of this.workers) worker.kill('SIGKILL');
    await Promise.all(this.workers.map((worker) => worker.exited));
  }
}

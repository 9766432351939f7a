import { randomBytes } from 'node:crypto';
import { INestApplicationContext, LoggerService, ModuleMetadata, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, Logger as TypeOrmLogger } from 'typeorm';
import { JobQueueModule, JobQueueModuleOptions, QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from './database';

export interface WorkerAppOptions {
  /** The database, usually `(await createTestDatabase()).url`. */
  url: string;
  /**
   * `JobQueueModule.forRoot` options, as given. `workerId` defaults to a fresh `test-worker-…` id
   * (returned as `workerId`); `worker` defaults to the library's default (a worker).
   */
  queueOptions?: JobQueueModuleOptions;
  /** Classes with `@JobHandler` methods, and anything they need. */
  providers?: Provider[];
  /** More modules beside the queue's (an entry point's module, say). */
  imports?: ModuleMetadata['imports'];
  /** The app's Nest logger, e.g. a `CapturingLogger` to read what the library logged. */
  logger?: LoggerService;
  /** The data source's TypeORM logger, e.g. a `QueryCounter` to count statements. */
  queryLogger?: TypeOrmLogger;
  /** The data source's `poolSize` (default: pg's 10). */
  poolSize?: number;
}

export interface WorkerApp {
  app: INestApplicationContext;
  queue: QueueService;
  /** The app's data source: closed with the app; read the database through another app after. */
  dataSource: DataSource;
  workerId: string;
  /** Runs the app's shutdown (drains the worker) and closes its pool. Idempotent. */
  close(): Promise<void>;
}

/** Apps of this test file that are booted and not closed yet (Jest isolates modules per file). */
const openApps = new Set<WorkerApp>();

/**
 * Boots an in-process app: `TypeOrmModule.forRoot({ url })`, `JobQueueModule.forRoot(queueOptions)`
 * and `providers`, through init, so its worker (unless `worker: false`) is started when this
 * resolves. A boot that fails is closed before the error is rethrown, so no pool or timer survives
 * it. Close every app, then call `assertNoWorkerLeftRunning` in `afterAll`.
 */
export async function startWorkerApp({
  url,
  queueOptions = {},
  providers = [],
  imports = [],
  logger,
  queryLogger,
  poolSize,
}: WorkerAppOptions): Promise<WorkerApp> {
  const workerId = queueOptions.workerId ?? `test-worker-${randomBytes(4).toString('hex')}`;
  const builder = Test.createTestingModule({
    imports: [
      // No connection retries: a broken setup fails the test at once instead of hanging it.
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        retryAttempts: 0,
        logger: queryLogger,
        poolSize,
      }),
      JobQueueModule.forRoot({ ...queueOptions, workerId }),
      ...imports,
    ],
    providers,
  });
  if (logger) builder.setLogger(logger);
  const moduleRef = await builder.compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await moduleRef.close().catch(() => undefined);
    throw error;
  }
  let closing: Promise<void> | undefined;
  const workerApp: WorkerApp = {
    app: moduleRef,
    queue: moduleRef.get(QueueService),
    dataSource: moduleRef.get(DataSource),
    workerId,
    close: () =>
      (closing ??= moduleRef.close().finally(() => {
        openApps.delete(workerApp);
      })),
  };
  openApps.add(workerApp);
  return workerApp;
}

/**
 * What booting a worker app with `options` rejects with; a boot that succeeds closes the app
 * and fails the test (a boot error's test must not pass on a boot that went through).
 */
export function bootFailure(options: WorkerAppOptions): Promise<unknown> {
  return startWorkerApp(options).then(
    async (booted) => {
      await booted.close();
      throw new Error('The app booted; it should have failed');
    },
    (thrown: unknown) => thrown,
  );
}

/**
 * For `afterAll`: fails when a test left an app open (it is closed here first, so the database can
 * still be dropped) or when any job is still claimed or running once every app is closed, i.e. a
 * worker was left holding it.
 */
export async function assertNoWorkerLeftRunning(url: string): Promise<void> {
  const leftOpen = [...openApps];
  await Promise.allSettled(leftOpen.map((workerApp) => workerApp.close()));
  const client = new Client({ connectionString: url });
  await client.connect();
  let held: Array<{ id: string; status: string; worker_id: string | null }>;
  try {
    ({ rows: held } = await client.query(
      `SELECT id, status, worker_id FROM job_queue.jobs WHERE status IN ('claimed', 'running') ORDER BY id`,
    ));
  } finally {
    await client.end();
  }
  const problems: string[] = [];
  if (leftOpen.length > 0) {
    problems.push(
      `${leftOpen.length} app(s) left running: ${leftOpen.map((a) => a.workerId).join(', ')}`,
    );
  }
  if (held.length > 0) {
    problems.push(
      `${held.length} job(s) still held after every app closed: ` +
        held
          .slice(0, 10)
          .map((row) => `#${row.id} ${row.status} by ${row.worker_id}`)
          .join(', '),
    );
  }
  if (problems.length > 0) throw new Error(`Worker left running: ${problems.join('; ')}`);
}

/** A worker test file's own database, and `startWorkerApp` on it for the file's shared apps. */
export interface WorkerTestFile {
  /** The file's database; read it once the helper's `beforeAll` has run. */
  readonly url: string;
  /** `startWorkerApp` on the file's database; the app is closed in `afterAll`, newest first. */
  start(options?: Omit<WorkerAppOptions, 'url'>): Promise<WorkerApp>;
}

/**
 * Registers a `beforeAll` that creates the file's database, and an `afterAll` that runs
 * `beforeClose` (say, opens a gate still holding a handler), closes the apps `start` made, checks
 * with `assertNoWorkerLeftRunning` that nothing was left running, and drops the database
 * whatever happened.
 */
export function useWorkerTestFile({
  beforeClose,
}: { beforeClose?: () => unknown } = {}): WorkerTestFile {
  let db: TestDatabase | undefined;
  const apps: WorkerApp[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    try {
      await beforeClose?.();
      for (const app of apps.reverse()) await app.close();
      if (db) await assertNoWorkerLeftRunning(db.url);
    } finally {
      await db?.drop();
    }
  });
  return {
    get url(): string {
      if (!db) throw new Error('useWorkerTestFile: the database is made in beforeAll');
      return db.url;
    },
    async start(options = {}): Promise<WorkerApp> {
      const app = await startWorkerApp({ ...options, url: this.url });
      apps.push(app);
      return app;
    },
  };
}

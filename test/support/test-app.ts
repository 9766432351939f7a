import { ModuleMetadata, Provider } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { JobQueueModule, JobQueueModuleOptions, QueueService } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from './database';

type PostgresOptions = Extract<DataSourceOptions, { type: 'postgres' }>;

export interface QueueTestingModuleOptions {
  /** The database, usually `(await createTestDatabase()).url`. */
  url: string;
  /** `JobQueueModule.forRoot` options. `worker` defaults to `false` (an enqueue-only app). */
  queueOptions?: JobQueueModuleOptions;
  /**
   * More options of the TypeORM data source, e.g. `logger` (see `QueryCounter`) or `name` (a named
   * data source; set `queueOptions.dataSource` to the same name).
   */
  typeOrmOptions?: Partial<Omit<PostgresOptions, 'type' | 'url'>> &
    Pick<TypeOrmModuleOptions, 'name'>;
  /** Extra modules of the testing module (fixtures, a second `TypeOrmModule.forRoot` …). */
  imports?: NonNullable<ModuleMetadata['imports']>;
  /** Extra providers, e.g. classes with `@JobHandler` methods. */
  providers?: Provider[];
}

export interface QueueTestingModule {
  module: TestingModule;
  queue: QueueService;
  /** The TypeORM data source named by `typeOrmOptions.name` (the default one if unnamed). */
  dataSource: DataSource;
  /** Runs the shutdown hooks and closes the pool. Call it in `afterAll`/`afterEach`. */
  close(): Promise<void>;
}

/**
 * Compiles and inits (`onModuleInit`, `onApplicationBootstrap`) a Nest testing module with
 * `TypeOrmModule.forRoot({ type: 'postgres', url })` and `JobQueueModule.forRoot(queueOptions)`,
 * and returns it with its `QueueService` and `DataSource`. The data source fails at once when it
 * cannot connect (no retries), so a broken setup fails the test instead of hanging it.
 */
export async function createQueueTestingModule({
  url,
  queueOptions = {},
  typeOrmOptions = {},
  imports = [],
  providers = [],
}: QueueTestingModuleOptions): Promise<QueueTestingModule> {
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, retryAttempts: 0, ...typeOrmOptions }),
      JobQueueModule.forRoot({ worker: false, ...queueOptions }),
      ...imports,
    ],
    providers,
  }).compile();
  await module.init();
  return {
    module,
    queue: module.get(QueueService),
    dataSource: module.get<DataSource>(getDataSourceToken(typeOrmOptions.name)),
    close: () => module.close(),
  };
}

/** A file's queue testing module and the database of its own that it runs on. */
export interface FileQueueTestingModule extends QueueTestingModule {
  db: TestDatabase;
}

/**
 * For a test file whose tests share one enqueue-only app: registers a `beforeAll` that creates
 * the file's database and `createQueueTestingModule` on it, and an `afterAll` that closes the app
 * and drops the database. Returns the app; its fields are set once that `beforeAll` has run.
 */
export function useQueueTestingModule(
  options: Omit<QueueTestingModuleOptions, 'url'> = {},
): FileQueueTestingModule {
  const app = {} as FileQueueTestingModule;
  beforeAll(async () => {
    app.db = await createTestDatabase();
    Object.assign(app, await createQueueTestingModule({ ...options, url: app.db.url }));
  });
  afterAll(async () => {
    await app.close?.();
    await app.db?.drop();
  });
  return app;
}

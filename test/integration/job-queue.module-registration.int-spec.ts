import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  InvalidJobInputError,
  InvalidJobQueueOptionsError,
  JobQueueModule,
  JobQueueModuleOptions,
  QueueService,
} from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { createQueueTestingModule, QueueTestingModule } from '../support/test-app';

const QUEUE_SETTINGS = Symbol('QUEUE_SETTINGS');

/** Stands for an app's config module: exports a value and an options factory. */
@Injectable()
class QueueOptionsFactory {
  constructor(@Inject(QUEUE_SETTINGS) private readonly settings: { payloadLimit: number }) {}

  createJobQueueOptions(): JobQueueModuleOptions {
    return { worker: false, maxPayloadBytes: this.settings.payloadLimit };
  }
}

@Module({
  providers: [{ provide: QUEUE_SETTINGS, useValue: { payloadLimit: 32 } }, QueueOptionsFactory],
  exports: [QUEUE_SETTINGS, QueueOptionsFactory],
})
class SettingsModule {}

/** A feature provider that injects the queue like application code does. */
@Injectable()
class ReportProducer {
  constructor(readonly queue: QueueService) {}
}

describe('JobQueueModule registration', () => {
  let db: TestDatabase;
  let otherDb: TestDatabase;

  beforeAll(async () => {
    [db, otherDb] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  });

  afterAll(async () => {
    await db?.drop();
    await otherDb?.drop();
  });

  async function boot(queueModule: ReturnType<typeof JobQueueModule.forRoot>) {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        queueModule,
      ],
      providers: [ReportProducer],
    }).compile();
    await module.init();
    return module;
  }

  /** The module enqueues through the app's DataSource and applies the options it was given. */
  async function expectWorking(module: TestingModule, payloadLimit = 1024 * 1024) {
    const queue = module.get(QueueService);
    expect(module.get(ReportProducer).queue).toBe(queue);

    const job = await queue.enqueue('registration', { ok: true });
    const [row] = await module
      .get(DataSource)
      .query(`SELECT job_type, data FROM job_queue.jobs WHERE id = $1`, [job.id]);
    expect(row).toEqual({ job_type: 'registration', data: { ok: true } });

    await expect(queue.enqueue('registration', 'x'.repeat(payloadLimit))).rejects.toMatchObject({
      constructor: InvalidJobInputError,
      field: 'data',
      message: expect.stringContaining(`at most ${payloadLimit} bytes`),
    });
  }

  describe('boots with', () => {
    let module: TestingModule | undefined;
    afterEach(async () => {
      await module?.close();
      module = undefined;
    });

    it('forRoot(options)', async () => {
      module = await boot(JobQueueModule.forRoot({ worker: false, maxPayloadBytes: 100 }));
      await expectWorking(module, 100);
    });

    it('forRoot() with no options at all', async () => {
      // A worker with defaults: no handlers are registered, so it has nothing to claim.
      module = await boot(JobQueueModule.forRoot());
      await expectWorking(module);
    });

    it('forRootAsync({ useFactory, inject, imports })', async () => {
      module = await boot(
        JobQueueModule.forRootAsync({
          imports: [SettingsModule],
          inject: [QUEUE_SETTINGS],
          useFactory: async (settings: { payloadLimit: number }) => ({
            worker: false,
            maxPayloadBytes: settings.payloadLimit,
          }),
        }),
      );
      await expectWorking(module, 32);
    });

    it('forRootAsync({ useClass })', async () => {
      module = await boot(
        JobQueueModule.forRootAsync({ imports: [SettingsModule], useClass: QueueOptionsFactory }),
      );
      await expectWorking(module, 32);
    });

    it('forRootAsync({ useExisting })', async () => {
      module = await boot(
        JobQueueModule.forRootAsync({
          imports: [SettingsModule],
          useExisting: QueueOptionsFactory,
        }),
      );
      await expectWorking(module, 32);
    });

    it('isGlobal: a module that does not import JobQueueModule can inject QueueService', async () => {
      @Module({ providers: [ReportProducer], exports: [ReportProducer] })
      class FeatureModule {}

      module = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
          JobQueueModule.forRoot({ worker: false, isGlobal: true }),
          FeatureModule,
        ],
      }).compile();
      await module.init();

      const producer = module.select(FeatureModule).get(ReportProducer);
      expect(producer.queue).toBe(module.get(QueueService));
      expect((await producer.queue.enqueue('global', {})).jobType).toBe('global');
    });
  });

  describe('a bad option fails the boot, naming the option', () => {
    // A data source the test owns (TypeOrmModule's would stay open when the boot fails).
    let ownDataSource: DataSource;
    beforeAll(async () => {
      ownDataSource = await new DataSource({ type: 'postgres', url: db.url }).initialize();
    });
    afterAll(() => ownDataSource?.destroy());

    const compile = (queueModule: ReturnType<typeof JobQueueModule.forRoot>) => {
      @Global()
      @Module({
        providers: [getDataSourceToken(), getDataSourceToken('jobsdb')].map((token) => ({
          provide: token,
          useFactory: () => ownDataSource,
        })),
        exports: [getDataSourceToken(), getDataSourceToken('jobsdb')],
      })
      class OwnDataSourceModule {}

      return Test.createTestingModule({ imports: [OwnDataSourceModule, queueModule] })
        .compile()
        .then((module) => module.init());
    };

    it.each<[string, () => ReturnType<typeof JobQueueModule.forRoot>, string, string]>([
      [
        'forRoot',
        () => JobQueueModule.forRoot({ worker: { concurrency: 0 } }),
        'worker.concurrency',
        ': 0.',
      ],
      [
        'forRoot with an unknown key',
        () => JobQueueModule.forRoot({ workr: false } as JobQueueModuleOptions),
        'workr',
        'workr',
      ],
      [
        'forRootAsync useFactory',
        () =>
          JobQueueModule.forRootAsync({
            useFactory: async () => ({ worker: false, staleAfterMs: -1 }),
          }),
        'staleAfterMs',
        '-1',
      ],
      [
        'forRootAsync useFactory with an unknown nested key',
        () =>
          JobQueueModule.forRootAsync({
            useFactory: () => ({ worker: { concurency: 5 } }) as JobQueueModuleOptions,
          }),
        'worker.concurency',
        'worker.concurency',
      ],
      [
        'forRootAsync useClass',
        () =>
          JobQueueModule.forRootAsync({
            useClass: class {
              createJobQueueOptions(): JobQueueModuleOptions {
                return { worker: false, backoff: { jitter: 2 } };
              }
            },
          }),
        'backoff.jitter',
        ': 2.',
      ],
      [
        'forRootAsync whose factory names another data source than the module',
        () =>
          JobQueueModule.forRootAsync({
            dataSource: 'jobsdb',
            useFactory: () => ({ worker: false, dataSource: 'elsewhere' }),
          }),
        'dataSource',
        `'elsewhere'`,
      ],
    ])('%s', async (_, queueModule, option, shown) => {
      const error: unknown = await compile(queueModule()).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
      expect(error).toMatchObject({
        option,
        message: expect.stringContaining(`"${option}"`),
      });
      expect((error as Error).message).toContain(shown);
    });
  });

  describe('a named TypeORM data source (`dataSource` option)', () => {
    let app: QueueTestingModule | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    const countIn = async (dataSource: DataSource, jobType: string): Promise<number> =>
      (
        await dataSource.query(
          `SELECT count(*)::int AS count FROM job_queue.jobs WHERE job_type = $1`,
          [jobType],
        )
      )[0].count;

    it('enqueues through the named one, not the default one', async () => {
      app = await createQueueTestingModule({
        url: db.url,
        typeOrmOptions: { name: 'jobsdb' },
        queueOptions: { dataSource: 'jobsdb' },
        // The default data source points at another database.
        imports: [TypeOrmModule.forRoot({ type: 'postgres', url: otherDb.url, retryAttempts: 0 })],
      });
      const defaultDataSource = app.module.get<DataSource>(getDataSourceToken());
      expect(app.dataSource).not.toBe(defaultDataSource);

      const job = await app.queue.enqueue('named_only', { where: 'jobsdb' });

      expect(await countIn(app.dataSource, 'named_only')).toBe(1);
      expect(await countIn(defaultDataSource, 'named_only')).toBe(0);
      expect((await app.queue.getJob(job.id)).data).toEqual({ where: 'jobsdb' });
    });

    it('forRootAsync({ dataSource, useFactory }) uses the named one too', async () => {
      const module = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            name: 'jobsdb',
            type: 'postgres',
            url: db.url,
            retryAttempts: 0,
          }),
          TypeOrmModule.forRoot({ type: 'postgres', url: otherDb.url, retryAttempts: 0 }),
          JobQueueModule.forRootAsync({
            dataSource: 'jobsdb',
            useFactory: async () => ({ worker: false, dataSource: 'jobsdb' }),
          }),
        ],
      }).compile();
      try {
        await module.init();
        await module.get(QueueService).enqueue('named_async', {});
        const named = module.get<DataSource>(getDataSourceToken('jobsdb'));
        expect(await countIn(named, 'named_async')).toBe(1);
        expect(await countIn(module.get<DataSource>(getDataSourceToken()), 'named_async')).toBe(0);
      } finally {
        await module.close();
      }
    });

    it('works when the named data source is the only one', async () => {
      app = await createQueueTestingModule({
        url: db.url,
        typeOrmOptions: { name: 'jobsdb' },
        queueOptions: { dataSource: 'jobsdb' },
      });
      const [job] = await app.queue.enqueueMany([{ type: 'named_alone', data: 1 }]);
      expect(await app.queue.getJob(job.id)).toMatchObject({ jobType: 'named_alone', data: 1 });
      expect(await countIn(app.dataSource, 'named_alone')).toBe(1);
    });
  });
});

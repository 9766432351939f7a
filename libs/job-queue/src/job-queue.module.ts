import { DynamicModule, Module } from '@nestjs/common';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  OPTIONS_TYPE,
} from './job-queue.module-definition';
import { dataSourceProvider, resolvedOptionsProvider } from './job-queue.providers';
import { QueueService } from './queue.service';

const coreProviders = [resolvedOptionsProvider, dataSourceProvider, QueueService];

/**
 * The job queue. Import it once, after `TypeOrmModule.forRoot`:
 * `JobQueueModule.forRoot({ worker: { concurrency: 10 } })` or `forRootAsync({ useFactory, inject })`.
 *
 * @publicApi
 */
@Module({})
export class JobQueueModule extends ConfigurableModuleClass {
  static forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return this.withCoreProviders(super.forRoot(options));
  }

  static forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    return this.withCoreProviders(super.forRootAsync(options));
  }

  private static withCoreProviders(definition: DynamicModule): DynamicModule {
    return {
      ...definition,
      providers: [...(definition.providers ?? []), ...coreProviders],
      exports: [...(definition.exports ?? []), QueueService],
    };
  }
}

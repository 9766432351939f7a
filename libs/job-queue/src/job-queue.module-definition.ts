import { ConfigurableModuleBuilder } from '@nestjs/common';
import { JobQueueModuleOptions } from './interfaces/job-queue-options.interface';

/**
 * `forRoot(options)` and `forRootAsync({ useFactory | useClass | useExisting })`, with an
 * `isGlobal` extra so feature modules can inject `QueueService` without importing the module.
 * `moduleName` gives the options token a readable name (JOB_QUEUE_MODULE_OPTIONS).
 */
export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: JOB_QUEUE_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<JobQueueModuleOptions>({ moduleName: 'JobQueue' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createJobQueueOptions')
  .setExtras({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** What `JobQueueModule.forRoot()` takes: the module's options plus `isGlobal`. @publicApi */
export type JobQueueModuleRootOptions = typeof OPTIONS_TYPE;

/**
 * What `JobQueueModule.forRootAsync()` takes: `useFactory`/`inject`, `useClass` or `useExisting`,
 * `imports`, `isGlobal`, and the data source's name (it must be known before the factory runs).
 * @publicApi
 */
export type JobQueueModuleAsyncOptions = typeof ASYNC_OPTIONS_TYPE & { dataSource?: string };

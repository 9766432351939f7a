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

import { Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from './job-queue.constants';
import { JOB_QUEUE_MODULE_OPTIONS } from './job-queue.module-definition';
import { resolveJobQueueOptions, ResolvedJobQueueOptions } from './job-queue.options';
import { JobQueueModuleOptions } from './interfaces/job-queue-options.interface';

/** Defaults and validation, fed by whichever registration style the app used. */
export const resolvedOptionsProvider: Provider = {
  provide: RESOLVED_JOB_QUEUE_OPTIONS,
  useFactory: (options: JobQueueModuleOptions) => resolveJobQueueOptions(options),
  inject: [JOB_QUEUE_MODULE_OPTIONS],
};

/**
 * The app's own TypeORM DataSource, by name: the queue opens no pool of its own.
 * NOTE: the name is only known once async options resolve, so the token cannot be listed in
 * `inject`; ModuleRef looks it up across modules (TypeOrmModule registers it globally).
 */
export const dataSourceProvider: Provider = {
  provide: JOB_QUEUE_DATA_SOURCE,
  useFactory: (moduleRef: ModuleRef, options: ResolvedJobQueueOptions): DataSource =>
    moduleRef.get(getDataSourceToken(options.dataSource), { strict: false }),
  inject: [ModuleRef, RESOLVED_JOB_QUEUE_OPTIONS],
};

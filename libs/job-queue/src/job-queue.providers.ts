import { Provider } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from './job-queue.constants';
import { JOB_QUEUE_MODULE_OPTIONS } from './job-queue.module-definition';
import { resolveJobQueueOptions } from './job-queue.options';
import { ResolvedJobQueueOptions } from './options/resolved-options';
import { optionValidator } from './validation/option.validator';
import { JobQueueModuleOptions } from './interfaces/job-queue-options.interface';

/** Defaults and validation, fed by whichever registration style the app used. */
export const resolvedOptionsProvider: Provider = {
  provide: RESOLVED_JOB_QUEUE_OPTIONS,
  useFactory: (options: JobQueueModuleOptions) => resolveJobQueueOptions(options),
  inject: [JOB_QUEUE_MODULE_OPTIONS],
};

/**
 * Where the worker's intervals are registered: the host's `SchedulerRegistry` when the host imports
 * `ScheduleModule.forRoot()` (a global module, so it is found from here), else a registry of the
 * queue's own. The queue never imports `ScheduleModule` itself: a second instance of it would mount
 * every host `@Cron` / `@Interval` / `@Timeout` a second time.
 */
export const schedulerProvider: Provider = {
  provide: JOB_QUEUE_SCHEDULER,
  useFactory: (hostRegistry: SchedulerRegistry | undefined) =>
    hostRegistry ?? new SchedulerRegistry(),
  inject: [{ token: SchedulerRegistry, optional: true }],
};

/**
 * The app's own TypeORM DataSource, by name: the queue opens no pool of its own.
 * NOTE: the name must be known when the module is defined (`forRoot({ dataSource })` or
 * `forRootAsync({ dataSource, useFactory })`), because Nest only waits for a provider it can
 * name in `inject`; an async factory cannot pick the data source.
 */
export function dataSourceProvider(name: string | undefined): Provider {
  return {
    provide: JOB_QUEUE_DATA_SOURCE,
    useFactory: (dataSource: DataSource, options: ResolvedJobQueueOptions): DataSource => {
      if (options.dataSource !== undefined && options.dataSource !== name) {
        optionValidator.fail(
          'dataSource',
          options.dataSource,
          `the same name as given to forRootAsync({ dataSource }) (${String(name)})`,
        );
      }
      return dataSource;
    },
    inject: [getDataSourceToken(name), RESOLVED_JOB_QUEUE_OPTIONS],
  };
}

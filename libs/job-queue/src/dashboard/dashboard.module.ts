import { DynamicModule, Module, Provider } from '@nestjs/common';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { createDashboardController } from './dashboard.controller';
import { DashboardBoot } from './dashboard.boot';
import { DashboardHttp } from './dashboard.http';
import {
  dashboardPath,
  JobQueueDashboardAsyncOptions,
  JobQueueDashboardOptions,
  resolveDashboardOptions,
} from './dashboard.options';
import { DashboardPages } from './dashboard.pages';
import { DashboardQueue } from './dashboard.queue';

/**
 * A dashboard of the app's queue, served by the app itself: counts by type, the last hour's
 * throughput, jobs listed and shown live, flows, schedules, and retry, cancel, cancel a flow,
 * pause, resume and run now. Mounted only where the app imports it, beside its `JobQueueModule`, and behind the
 * app's own `guard`: without one, every request is refused.
 *
 * @publicApi
 */
@Module({})
export class JobQueueDashboardModule {
  /** Serves the dashboard at `path` (default `/queue`), behind `guard`. */
  static register(options: JobQueueDashboardOptions = {}): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    return dashboardModule(resolved.path, { provide: DASHBOARD_OPTIONS, useValue: resolved }, []);
  }

  /**
   * As `register`, with the options but `path` from a factory (its `inject`ed providers found
   * through `imports`). `path` is given here, beside the factory: routes are mounted before any
   * factory runs.
   */
  static registerAsync(options: JobQueueDashboardAsyncOptions): DynamicModule {
    const path = dashboardPath(options.path);
    const factory = options.useFactory as (...args: unknown[]) => unknown;
    return dashboardModule(
      path,
      {
        provide: DASHBOARD_OPTIONS,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => {
          const given = (await factory(...args)) as JobQueueDashboardOptions;
          if (typeof given === 'object' && given !== null && 'path' in given) {
            throw new Error(
              'JobQueueDashboardModule.registerAsync: give path beside useFactory, not from it',
            );
          }
          return resolveDashboardOptions({ ...given, path });
        },
      },
      options.imports ?? [],
    );
  }
}

function dashboardModule(
  path: string,
  optionsProvider: Provider,
  imports: NonNullable<JobQueueDashboardAsyncOptions['imports']>,
): DynamicModule {
  return {
    module: JobQueueDashboardModule,
    imports,
    controllers: [createDashboardController(path)],
    providers: [optionsProvider, DashboardHttp, DashboardQueue, DashboardPages, DashboardBoot],
  };
}

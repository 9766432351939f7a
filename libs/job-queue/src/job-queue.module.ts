import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  ConfigurableModuleClass,
  JobQueueModuleAsyncOptions,
  JobQueueModuleRootOptions,
} from './job-queue.module-definition';
import {
  dataSourceProvider,
  resolvedOptionsProvider,
  schedulerProvider,
} from './job-queue.providers';
import { QueueService } from './queue.service';
import { JobHandlerMetadataAccessor } from './discovery/job-handler-metadata.accessor';
import { JobHandlerExplorer } from './discovery/job-handler.explorer';
import { JobHandlerRegistry } from './discovery/job-handler.registry';
import { StaleJobReaper } from './maintenance/stale-job-reaper';
import { ScheduledJobStager } from './maintenance/scheduled-job-stager';
import { CronScheduler } from './cron/cron-scheduler';
import { JobPruner } from './maintenance/job-pruner';
import { JobStatsRefresher } from './maintenance/job-stats-refresher';
import { JobCompleter } from './worker/job-completer';
import { JobExecutor } from './worker/job-executor';
import { JobHeartbeat } from './worker/job-heartbeat';
import { JobListener } from './worker/job-listener';
import { JobPoller } from './worker/job-poller';
import { JobWorker } from './worker/job-worker';
import { JobWorkerOrchestrator } from './worker/job-worker.orchestrator';
import { PrefetchedJobs } from './worker/prefetched-jobs';
import { JobTypePauses } from './worker/job-type-pauses';
import { RunTimes } from './worker/run-times';
import { ClaimWakeup } from './periodic/claim-wakeup';
import { QueueClock } from './periodic/queue-clock';
import { MaintenanceContext } from './periodic/maintenance-task';
import { RunningJobs } from './worker/running-jobs';
import { JobEventListenerExplorer } from './discovery/job-event-listener.explorer';
import { JobEventListenerRegistry } from './discovery/job-event-listener.registry';
import { RemoteJobEvents } from './events/remote-job-events';
import { JobEventStream } from './events/job-event-stream';
import { JobEventDispatcher } from './events/job-event-dispatcher';
import { JobWaits } from './events/job-waits';
import { JobQueueInstruments } from './instrumentation/job-queue-instruments';
import { AmbientTransaction } from './queue/ambient-transaction';

// Registered whatever the options say: with `worker: false` they stay idle (the options are only
// known once async options resolve, after the provider list is fixed).
export const coreProviders = [
  resolvedOptionsProvider,
  schedulerProvider,
  QueueService,
  JobHandlerMetadataAccessor,
  JobHandlerExplorer,
  JobHandlerRegistry,
  JobEventListenerRegistry,
  JobEventListenerExplorer,
  RemoteJobEvents,
  JobEventStream,
  JobEventDispatcher,
  JobWaits,
  JobQueueInstruments,
  AmbientTransaction,
  RunningJobs,
  PrefetchedJobs,
  RunTimes,
  JobTypePauses,
  ClaimWakeup,
  QueueClock,
  MaintenanceContext,
  JobCompleter,
  JobExecutor,
  JobPoller,
  JobListener,
  JobHeartbeat,
  StaleJobReaper,
  ScheduledJobStager,
  CronScheduler,
  JobPruner,
  JobStatsRefresher,
  JobWorker,
  JobWorkerOrchestrator,
];

/**
 * The job queue. Import it once, after `TypeOrmModule.forRoot`:
 * `JobQueueModule.forRoot({ worker: { concurrency: 10 } })` or `forRootAsync({ useFactory, inject })`.
 *
 * @publicApi
 */
@Module({})
export class JobQueueModule extends ConfigurableModuleClass {
  static forRoot(options: JobQueueModuleRootOptions = {}): DynamicModule {
    return this.withCoreProviders(super.forRoot(options), options.dataSource);
  }

  /** `dataSource` goes here, beside `useFactory`, not in what the factory returns. */
  static forRootAsync(options: JobQueueModuleAsyncOptions): DynamicModule {
    const { dataSource, ...asyncOptions } = options;
    return this.withCoreProviders(super.forRootAsync(asyncOptions), dataSource);
  }

  private static withCoreProviders(
    definition: DynamicModule,
    dataSource: string | undefined,
  ): DynamicModule {
    return {
      ...definition,
      // No ScheduleModule.forRoot() here: see schedulerProvider.
      imports: [...(definition.imports ?? []), DiscoveryModule],
      providers: [
        ...(definition.providers ?? []),
        ...coreProviders,
        dataSourceProvider(dataSource),
      ],
      exports: [...(definition.exports ?? []), QueueService, JobWorker, JobQueueInstruments],
    };
  }
}

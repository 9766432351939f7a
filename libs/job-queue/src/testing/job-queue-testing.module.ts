import { DynamicModule, Injectable, Module } from '@nestjs/common';
import { JobQueueModule } from '../job-queue.module';
import {
  JobQueueModuleAsyncOptions,
  JobQueueModuleRootOptions,
} from '../job-queue.module-definition';
import { JobWorkerOrchestrator } from '../worker/job-worker.orchestrator';
import { JobQueueTester } from './job-queue-tester';

/**
 * Takes the place of the orchestrator that starts the worker at bootstrap: in a test nothing
 * runs by itself (no poller, LISTEN, reaper, stager, cron ticks or pruner); `JobQueueTester`
 * runs what the test asks for.
 */
@Injectable()
class ManualWorkerOrchestrator {}

/**
 * The real module for tests: the same options, providers and `QueueService`, with nothing
 * running by itself, and `JobQueueTester` to inject. Import it where the app imports
 * `JobQueueModule`, after `TypeOrmModule.forRoot`.
 *
 * @publicApi
 */
@Module({})
export class JobQueueTestingModule {
  static forRoot(options: JobQueueModuleRootOptions = {}): DynamicModule {
    return withTester(JobQueueModule.forRoot(options));
  }

  static forRootAsync(options: JobQueueModuleAsyncOptions): DynamicModule {
    return withTester(JobQueueModule.forRootAsync(options));
  }
}

function withTester(real: DynamicModule): DynamicModule {
  return {
    ...real,
    module: JobQueueTestingModule,
    providers: [
      ...(real.providers ?? []),
      // Registered after the real one: the last provider of a token is the one Nest makes.
      { provide: JobWorkerOrchestrator, useClass: ManualWorkerOrchestrator },
      JobQueueTester,
    ],
    exports: [...(real.exports ?? []), JobQueueTester],
  };
}

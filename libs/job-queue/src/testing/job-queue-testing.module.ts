import { DynamicModule, Injectable, Module, Type } from '@nestjs/common';
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
 * What `Test.createTestingModule(...)` returns, as far as `JobQueueTestingModule.overrideIn`
 * needs it (so the package does not depend on `@nestjs/testing`).
 *
 * @publicApi
 */
export interface OverridableTestingModule<B> {
  overrideProvider(token: unknown): { useClass(type: Type<unknown>): B };
}

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

  /**
   * For an app whose module already imports `JobQueueModule.forRoot/forRootAsync`, used as it
   * is: `JobQueueTestingModule.overrideIn(Test.createTestingModule({ imports: [AppModule] }))`
   * keeps its worker from starting by itself; `JobQueueTester.from(moduleRef)` then runs its jobs.
   */
  static overrideIn<B extends OverridableTestingModule<B>>(builder: B): B {
    return builder.overrideProvider(JobWorkerOrchestrator).useClass(ManualWorkerOrchestrator);
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

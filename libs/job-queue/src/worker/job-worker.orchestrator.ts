import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { jobTypesToClaim, JobWorker } from './job-worker';

/**
 * Ties the worker to the application's lifecycle: starts it once the application has
 * bootstrapped (handlers are collected by then) unless `worker.autoStart` is false, and stops
 * it, draining, before shutdown.
 */
@Injectable()
export class JobWorkerOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly worker: JobWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const worker = this.options.worker;
    if (worker === false) return;
    if (worker.autoStart) await this.worker.start();
    // A worker started later must not find out only then that its options are wrong.
    else jobTypesToClaim(worker, this.registry);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.worker.stop();
  }
}

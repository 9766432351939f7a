import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobHandlerFunction } from '../interfaces/job-context.interface';
import { JobHandlerMetadataAccessor } from './job-handler-metadata.accessor';
import { JobHandlerRegistry } from './job-handler.registry';
import { resolveHandlerOptions } from './job-handler-options';
import { providerPrototype } from './provider-prototype';
import { withDto } from './dto-handler';

/**
 * Collects `@JobHandler` methods into the registry at module init. It only collects: the
 * worker starts at application bootstrap. A duplicate type or a bad option fails the boot.
 */
@Injectable()
export class JobHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger('JobQueue');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
    private readonly accessor: JobHandlerMetadataAccessor,
    private readonly registry: JobHandlerRegistry,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.worker === false) return;
    for (const wrapper of this.discovery.getProviders()) this.exploreProvider(wrapper);
  }

  private exploreProvider(wrapper: InstanceWrapper): void {
    const found = providerPrototype(wrapper);
    if (!found) return;
    const { prototype, isStatic } = found;
    const handlerMethods = this.metadataScanner
      .getAllMethodNames(prototype)
      .filter((name) => this.accessor.getJobHandlerMetadata(prototype[name]));
    if (handlerMethods.length === 0) return;
    const className = prototype.constructor.name;
    if (!isStatic) {
      this.logger.warn(
        `${className} is request-scoped (or depends on a request-scoped provider): its ` +
          `@JobHandler methods (${handlerMethods.join(', ')}) are not registered. Make it a singleton.`,
      );
      return;
    }
    for (const methodName of handlerMethods) {
      const method = prototype[methodName] as JobHandlerFunction;
      const { jobType, options } = this.accessor.getJobHandlerMetadata(method)!;
      const name = `${className}#${methodName}`;
      const where = `@JobHandler('${jobType}') on ${name}`;
      const resolved = resolveHandlerOptions(where, options, this.options);
      const run = method.bind(wrapper.instance) as JobHandlerFunction;
      this.registry.add({
        jobType,
        name,
        run: resolved.dto ? withDto(run, resolved.dto, `${where}: dto`) : run,
        options: resolved,
      });
    }
  }
}

import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { Injector } from '@nestjs/core/injector/injector';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobHandlerFunction } from '../interfaces/job-context.interface';
import { JobHandlerMetadataAccessor } from './job-handler-metadata.accessor';
import { JobHandlerRegistry } from './job-handler.registry';
import { resolveHandlerOptions } from './job-handler-options';
import { providerPrototype } from './provider-prototype';
import { withDto } from './dto-handler';
import { scopedHandler } from './scoped-handler';
import { checkDeadLetterCycles } from './dead-letter-cycles';

/**
 * Collects `@JobHandler` methods into the registry at module init. It only collects: the
 * worker starts at application bootstrap. A duplicate type or a bad option fails the boot.
 */
@Injectable()
export class JobHandlerExplorer implements OnModuleInit {
  private readonly injector = new Injector();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly moduleRef: ModuleRef,
    private readonly metadataScanner: MetadataScanner,
    private readonly accessor: JobHandlerMetadataAccessor,
    private readonly registry: JobHandlerRegistry,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.worker === false) return;
    for (const wrapper of this.discovery.getProviders()) this.exploreProvider(wrapper);
    checkDeadLetterCycles(this.registry.all());
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
    for (const methodName of handlerMethods) {
      const method = prototype[methodName] as JobHandlerFunction;
      const { jobType, options } = this.accessor.getJobHandlerMetadata(method)!;
      const name = `${className}#${methodName}`;
      const where = `@JobHandler('${jobType}') on ${name}`;
      const resolved = resolveHandlerOptions(where, options, this.options, jobType);
      // A request-scoped provider (or one depending on one) has no instance to bind: each run
      // resolves one of its own.
      const run = isStatic
        ? (method.bind(wrapper.instance) as JobHandlerFunction)
        : scopedHandler(wrapper, methodName, this.moduleRef, this.injector);
      this.registry.add({
        jobType,
        name,
        run: resolved.dto ? withDto(run, resolved.dto, `${where}: dto`) : run,
        options: resolved,
      });
    }
  }
}

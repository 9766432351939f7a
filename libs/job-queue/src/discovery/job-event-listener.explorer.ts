import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { JOB_EVENT_NAMES, MAX_JOB_TYPE_LENGTH } from '../job-queue.constants';
import { JobEvent } from '../interfaces/job-event.interface';
import { optionValidator as check } from '../validation/option.validator';
import { JobHandlerMetadataAccessor } from './job-handler-metadata.accessor';
import { JobEventListenerRegistry } from './job-event-listener.registry';
import { providerPrototype } from './provider-prototype';

/**
 * Collects `@OnJobEvent` methods into the registry at module init, in every process (an
 * enqueue-only one included: it hears of jobs others run). An unknown event or a bad `type`
 * fails the boot, naming the method.
 */
@Injectable()
export class JobEventListenerExplorer implements OnModuleInit {
  private readonly logger = new Logger('JobQueue');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
    private readonly accessor: JobHandlerMetadataAccessor,
    private readonly registry: JobEventListenerRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) this.exploreProvider(wrapper);
  }

  private exploreProvider(wrapper: InstanceWrapper): void {
    const found = providerPrototype(wrapper);
    if (!found) return;
    const { prototype, isStatic } = found;
    const methods = this.metadataScanner
      .getAllMethodNames(prototype)
      .filter((name) => this.accessor.getJobEventListenerMetadata(prototype[name]));
    if (methods.length === 0) return;
    const className = prototype.constructor.name;
    if (!isStatic) {
      this.logger.warn(
        `${className} is request-scoped (or depends on a request-scoped provider): its ` +
          `@OnJobEvent methods (${methods.join(', ')}) are not registered. Make it a singleton.`,
      );
      return;
    }
    for (const methodName of methods) {
      const method = prototype[methodName];
      const { events, options } = this.accessor.getJobEventListenerMetadata(method)!;
      const name = `${className}#${methodName}`;
      const where = `@OnJobEvent on ${name}`;
      check.nonEmptyArray(`${where}: event`, events, 'an event name or a non-empty array of them');
      events.forEach((event, i) => {
        if (!JOB_EVENT_NAMES.includes(event)) {
          check.fail(`${where}: event[${i}]`, event, `one of ${JOB_EVENT_NAMES.join(', ')}`);
        }
      });
      check.plainObject(where, options, 'an options object');
      check.knownKeys(options, ['type'], { prefix: `${where}: ` });
      const types =
        options.type === undefined
          ? undefined
          : (Array.isArray(options.type) ? options.type : [options.type]).map((type, i) =>
              check.string(`${where}: type[${i}]`, type, MAX_JOB_TYPE_LENGTH),
            );
      this.registry.add({
        name,
        events: new Set(events),
        types: types && new Set(types),
        run: (event: JobEvent) => method.call(wrapper.instance, event),
      });
    }
  }
}

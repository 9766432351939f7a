import { ContextIdFactory, ModuleRef } from '@nestjs/core';
import { Injector } from '@nestjs/core/injector/injector';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { JobHandlerFunction } from '../interfaces/job-context.interface';

/**
 * The handler method `methodName` of a request-scoped provider (or one that depends on one):
 * each run resolves the provider in a DI sub-tree of its own, with the job registered as the
 * sub-tree's request (`JOB_REF`, `@InjectJob()`). For durable providers the sub-tree comes from
 * the app's `ContextIdStrategy` (`ContextIdFactory.apply`), which is given the job as the
 * request, so durable providers are shared per the tree the strategy keys it to.
 */
export function scopedHandler(
  wrapper: InstanceWrapper,
  methodName: string,
  moduleRef: ModuleRef,
  injector: Injector,
): JobHandlerFunction {
  // NOTE: the provider's module (`host`) holds the wrapper; the injector builds the sub-tree
  // from there, as Nest does for a request-scoped controller.
  const host = wrapper.host!;
  return async (job, ctx) => {
    const contextId = ContextIdFactory.getByRequest(job);
    moduleRef.registerRequestByContextId(job, contextId);
    const instance = (await injector.loadPerContext(
      wrapper.instance,
      host,
      host.providers,
      contextId,
      wrapper,
    )) as Record<string, JobHandlerFunction>;
    return instance[methodName](job, ctx);
  };
}

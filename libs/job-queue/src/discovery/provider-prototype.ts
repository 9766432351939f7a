import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';

/** A provider's prototype, where decorated methods live, and whether it can be bound now. */
export interface ProviderPrototype {
  prototype: Record<string, Function>;
  /** False for a request-scoped provider (or one depending on one): no instance to bind, each run resolves one. */
  isStatic: boolean;
}

/**
 * NOTE: providers built by useFactory/useValue have no metatype of their class; a static
 * provider's instance's prototype is what carries the decorated methods. A request-scoped one has
 * no instance yet, so its class is read from the metatype.
 */
export function providerPrototype(wrapper: InstanceWrapper): ProviderPrototype | undefined {
  const isStatic = wrapper.isDependencyTreeStatic();
  const prototype: object | undefined = isStatic
    ? wrapper.instance && typeof wrapper.instance === 'object'
      ? Object.getPrototypeOf(wrapper.instance)
      : undefined
    : (wrapper.metatype as Function | undefined)?.prototype;
  return prototype ? { prototype: prototype as Record<string, Function>, isStatic } : undefined;
}

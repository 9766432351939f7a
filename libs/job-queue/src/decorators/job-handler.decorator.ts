import { SetMetadata } from '@nestjs/common';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';
import type {
  JobTypes,
  TypedJobHandlerMethod,
  UntypedOnly,
} from '../interfaces/job-types.interface';

/** What `@JobHandler` records on a method. */
export interface JobHandlerMetadata {
  jobType: string;
  options: JobHandlerOptions;
}

/**
 * The decorator `@JobHandler(type)` returns for a type of `JobTypes`: it accepts only a method
 * that takes the type's job and returns its result (see `TypedJobHandlerMethod`).
 *
 * @publicApi
 */
export type TypedJobHandlerDecorator<K extends keyof JobTypes> = <
  M extends TypedJobHandlerMethod<K>,
>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a provider method as the handler of `jobType`. It is called as
 * `method(job, ctx)`; what it returns is stored as the job's result, a throw is a failed attempt.
 * Options are checked at boot; two handlers for one type fail the boot. Once the app declares
 * `JobTypes`, `jobType` is one of its names and the method must take that type's job and return
 * its result.
 *
 * @param jobType the job type this method runs
 * @param options concurrency, maxAttempts, timeoutMs, backoff for this type
 * @publicApi
 */
export function JobHandler<K extends keyof JobTypes>(
  jobType: K,
  options?: JobHandlerOptions,
): TypedJobHandlerDecorator<K>;
/** As above, for an app without `JobTypes`: any type name, any handler method. @publicApi */
export function JobHandler(
  jobType: UntypedOnly<string>,
  options?: JobHandlerOptions,
): MethodDecorator;
export function JobHandler(jobType: string, options: JobHandlerOptions = {}): MethodDecorator {
  return SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER_METADATA, { jobType, options });
}

import { SetMetadata } from '@nestjs/common';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import { JobHandlerOptions } from '../interfaces/job-handler-options.interface';

/** What `@JobHandler` records on a method. */
export interface JobHandlerMetadata {
  jobType: string;
  options: JobHandlerOptions;
}

/**
 * Marks a provider method as the handler of `jobType`. It is called as
 * `method(job, ctx)`; what it returns is stored as the job's result, a throw is a failed attempt.
 * Options are checked at boot; two handlers for one type fail the boot.
 *
 * @param jobType the job type this method runs
 * @param options concurrency, maxAttempts, timeoutMs, backoff for this type
 * @publicApi
 */
export function JobHandler(jobType: string, options: JobHandlerOptions = {}): MethodDecorator {
  return SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER_METADATA, { jobType, options });
}

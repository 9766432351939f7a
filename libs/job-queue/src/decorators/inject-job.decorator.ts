import { Inject } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';

/**
 * The injection token of the job a request-scoped handler's run is for: each run of a
 * `@JobHandler` method on a request-scoped provider resolves the provider (and its request-scoped
 * dependencies) anew, with the job as the sub-tree's request. It is Nest's `REQUEST` token, so a
 * provider that serves HTTP requests too gets the request there and the `Job` in a run.
 *
 * @publicApi
 */
export const JOB_REF = REQUEST;

/**
 * Injects the `Job` of the current run into a request-scoped provider (`JOB_REF`):
 * `constructor(@InjectJob() private readonly job: Job<ReportRequest>) {}`.
 *
 * @publicApi
 */
export function InjectJob(): PropertyDecorator & ParameterDecorator {
  return Inject(JOB_REF);
}

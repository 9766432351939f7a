import type { Type } from '@nestjs/common';
import { InvalidJobDataError } from '../errors';
import { JobHandlerFunction } from '../interfaces/job-context.interface';
import { toDto } from '../queue/job-dto';

/**
 * `run` with its job's `data` turned into an instance of `dto` and validated first; data that
 * fails fails the job for good (`InvalidJobDataError`, a `PermanentJobError`). The instance
 * replaces `job.data`, so `ctx.job.data` is the same instance.
 */
export function withDto(
  run: JobHandlerFunction,
  dto: Type<object>,
  where: string,
): JobHandlerFunction {
  return async (job, ctx) => {
    const outcome = await toDto(dto, job.data, where);
    if (!outcome.ok) throw new InvalidJobDataError(dto.name, outcome.fields);
    job.data = outcome.value;
    return run(job, ctx);
  };
}

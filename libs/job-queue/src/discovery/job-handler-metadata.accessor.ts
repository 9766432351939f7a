import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import { JobHandlerMetadata } from '../decorators/job-handler.decorator';

/** The only place that reads `@JobHandler` metadata. */
@Injectable()
export class JobHandlerMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getJobHandlerMetadata(target: Function): JobHandlerMetadata | undefined {
    return this.reflector.get<JobHandlerMetadata | undefined>(JOB_HANDLER_METADATA, target);
  }
}

import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JOB_EVENT_METADATA, JOB_HANDLER_METADATA } from '../job-queue.constants';
import { JobHandlerMetadata } from '../decorators/job-handler.decorator';
import { JobEventListenerMetadata } from '../decorators/on-job-event.decorator';

/** The only place that reads `@JobHandler` and `@OnJobEvent` metadata. */
@Injectable()
export class JobHandlerMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getJobHandlerMetadata(target: Function): JobHandlerMetadata | undefined {
    return this.reflector.get<JobHandlerMetadata | undefined>(JOB_HANDLER_METADATA, target);
  }

  getJobEventListenerMetadata(target: Function): JobEventListenerMetadata | undefined {
    return this.reflector.get<JobEventListenerMetadata | undefined>(JOB_EVENT_METADATA, target);
  }
}

import { Body, Controller, Post } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import {
  optionalString,
  requireInt,
  requireObject,
  requireString,
} from '../common/request-validation';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import {
  BULK_IMPORT_PRIORITY,
  IMAGE_PROCESS_JOB,
  ImageJobData,
  MAX_BULK_IMAGES,
  USER_UPLOAD_PRIORITY,
} from './images.constants';

@Controller('images')
export class ImagesController {
  constructor(private readonly queue: QueueService) {}

  /** A user's upload: `{ "name": "cat.png" }` → one high-priority job. */
  @Post()
  async upload(@Body() body: unknown): Promise<JobResponse> {
    const name = requireString('name', requireObject(body).name);
    const job = await this.queue.enqueue<ImageJobData>(
      IMAGE_PROCESS_JOB,
      { name, source: 'upload' },
      { priority: USER_UPLOAD_PRIORITY },
    );
    return toJobResponse(job);
  }

  /** A backfill: `{ "count": 500, "prefix": "archive" }` → many low-priority jobs in one statement. */
  @Post('bulk')
  async bulk(
    @Body() body: unknown,
  ): Promise<{ enqueued: number; firstId: string; lastId: string }> {
    const input = requireObject(body);
    const count = requireInt('count', input.count, { min: 1, max: MAX_BULK_IMAGES });
    const prefix = optionalString('prefix', input.prefix) ?? 'bulk';
    const jobs = await this.queue.enqueueMany<ImageJobData>(
      Array.from({ length: count }, (_, i) => ({
        type: IMAGE_PROCESS_JOB,
        data: { name: `${prefix}-${i + 1}.png`, source: 'bulk' as const },
        priority: BULK_IMPORT_PRIORITY,
      })),
    );
    return { enqueued: jobs.length, firstId: jobs[0].id, lastId: jobs[jobs.length - 1].id };
  }
}

import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, JobContext, JobHandler } from 'nest-pg-job-queue';
import { IMAGE_PROCESS_JOB, ImageJobData } from './images.constants';

/** Pretends to make thumbnails; a real handler would fetch, resize and store the image. */
@Injectable()
export class ImageHandlers {
  @JobHandler(IMAGE_PROCESS_JOB, { maxAttempts: 5, timeoutMs: 30_000 })
  async process(job: Job<ImageJobData>, ctx: JobContext): Promise<{ thumbnail: string }> {
    await sleep(Number(process.env.IMAGE_WORK_MS ?? 50), undefined, { signal: ctx.signal });
    return { thumbnail: `thumbs/${job.data.name}` };
  }
}

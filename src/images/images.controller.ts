import { Body, Controller, Post } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import { AuditedUploadService } from './audited-upload.service';
import { AuditedUploadDto } from './dto/audited-upload.dto';
import { BulkImagesDto } from './dto/bulk-images.dto';
import { UploadImageDto } from './dto/upload-image.dto';
import {
  BULK_IMPORT_PRIORITY,
  IMAGE_PROCESS_JOB,
  ImageJobData,
  USER_UPLOAD_PRIORITY,
} from './images.constants';

@Controller('images')
export class ImagesController {
  constructor(
    private readonly queue: QueueService,
    private readonly audited: AuditedUploadService,
  ) {}

  /** A user's upload: `{ "name": "cat.png" }` → one high-priority job. */
  @Post()
  async upload(@Body() { name }: UploadImageDto): Promise<JobResponse> {
    const job = await this.queue.enqueue<ImageJobData>(
      IMAGE_PROCESS_JOB,
      { name, source: 'upload' },
      { priority: USER_UPLOAD_PRIORITY },
    );
    return toJobResponse(job);
  }

  /**
   * The same upload with an audit line, `{ "name": "cat.png", "uploadedBy": "alice" }`: the line
   * and the job are written in one transaction (AuditedUploadService).
   */
  @Post('audited')
  async auditedUpload(@Body() { name, uploadedBy }: AuditedUploadDto): Promise<JobResponse> {
    return toJobResponse(await this.audited.upload(name, uploadedBy));
  }

  /** A backfill: `{ "count": 500, "prefix": "archive" }` → many low-priority jobs in one statement. */
  @Post('bulk')
  async bulk(
    @Body() { count, prefix = 'bulk' }: BulkImagesDto,
  ): Promise<{ enqueued: number; firstId: string; lastId: string }> {
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

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job, QueueService } from 'nest-pg-job-queue';
import { DataSource } from 'typeorm';
import { AuditLog } from '../audit/audit-log.entity';
import { IMAGE_PROCESS_JOB, ImageJobData, USER_UPLOAD_PRIORITY } from './images.constants';

/**
 * The queue's headline feature: the job is enqueued inside the app's own transaction, next to
 * the app's own write. Both commit or neither does: no audit line for a job that never runs, no
 * job for an upload whose audit line failed. (With a queue outside the database, the job would
 * already be out by the time the audit write failed.)
 */
@Injectable()
export class AuditedUploadService {
  constructor(
    private readonly queue: QueueService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async upload(name: string, uploadedBy: string): Promise<Job<ImageJobData>> {
    return this.dataSource.transaction(async (manager) => {
      const job = await this.queue.enqueue<ImageJobData>(
        IMAGE_PROCESS_JOB,
        { name, source: 'upload' },
        { priority: USER_UPLOAD_PRIORITY, manager },
      );
      // After the enqueue: the audit line names the job. Should it fail, the job goes too.
      await manager.insert(AuditLog, { message: `${uploadedBy} uploaded ${name} (job ${job.id})` });
      return job;
    });
  }
}

import { Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Job, JobQueueStats, JobStatus, QueueService } from 'nest-pg-job-queue';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { optionalEnum, optionalQueryInt, optionalString } from '../common/request-validation';
import { JobResponse, toJobResponse } from './job.response';

const MAX_PAGE_SIZE = 200;

/**
 * Monitoring and management of jobs, as an operator would use them: every route wants the admin
 * token (`Authorization: Bearer <token>`, see AdminTokenGuard). Jobs are answered as JobResponse:
 * no worker names, no stack traces.
 */
@Controller('jobs')
@UseGuards(AdminTokenGuard)
export class JobsController {
  constructor(
    private readonly queue: QueueService,
    // The Job entity is a plain TypeORM entity: list and filter it like any other.
    @InjectRepository(Job) private readonly jobs: Repository<Job>,
  ) {}

  /** `GET /jobs?status=failed&type=image.process&page=1&pageSize=50`, newest first. */
  @Get()
  async list(
    @Query() query: Record<string, unknown>,
  ): Promise<{ items: JobResponse[]; total: number; page: number; pageSize: number }> {
    const status = optionalEnum('status', query.status, Object.values(JobStatus));
    const jobType = optionalString('type', query.type);
    const page = optionalQueryInt('page', query.page, { min: 1, max: 1_000_000 }) ?? 1;
    const pageSize =
      optionalQueryInt('pageSize', query.pageSize, { min: 1, max: MAX_PAGE_SIZE }) ?? 50;
    const [items, total] = await this.jobs.findAndCount({
      where: { ...(status && { status }), ...(jobType && { jobType }) },
      order: { id: 'DESC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    return { items: items.map(toJobResponse), total, page, pageSize };
  }

  @Get('stats')
  stats(): Promise<JobQueueStats> {
    return this.queue.stats();
  }

  /** Claimed or running jobs that have not changed for `olderThanMinutes` (default 10). */
  @Get('stale')
  async stale(@Query('olderThanMinutes') olderThanMinutes?: string): Promise<JobResponse[]> {
    const minutes = optionalQueryInt('olderThanMinutes', olderThanMinutes, {
      min: 0,
      max: 525_600,
    });
    return (await this.queue.findStale((minutes ?? 10) * 60_000)).map(toJobResponse);
  }

  @Get(':id')
  async get(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.getJob(id));
  }

  @Post(':id/cancel')
  async cancel(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.cancel(id));
  }

  @Post(':id/retry')
  async retry(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.retry(id));
  }
}

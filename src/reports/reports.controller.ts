import { Body, Controller, Post } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import { requireMatch, requireObject } from '../common/request-validation';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import { REPORT_GENERATION_JOB, ReportRequest } from './reports.constants';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

@Controller('reports')
export class ReportsController {
  constructor(private readonly queue: QueueService) {}

  /** `{ "month": "2026-11" }` → one report job; at most one unfinished report per month. */
  @Post()
  async request(@Body() body: unknown): Promise<JobResponse> {
    const month = requireMatch('month', requireObject(body).month, MONTH, 'a month like "2026-11"');
    const job = await this.queue.enqueue<ReportRequest>(
      REPORT_GENERATION_JOB,
      { month },
      { uniqueKey: `report:${month}` },
    );
    return toJobResponse(job);
  }
}

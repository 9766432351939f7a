import { Body, Controller, Post } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import { RequestReportDto } from './dto/request-report.dto';
import { REPORT_GENERATION_JOB, ReportRequest } from './reports.constants';

@Controller('reports')
export class ReportsController {
  constructor(private readonly queue: QueueService) {}

  /** `{ "month": "2026-11" }` → one report job; at most one unfinished report per month. */
  @Post()
  async request(@Body() { month }: RequestReportDto): Promise<JobResponse> {
    const job = await this.queue.enqueue<ReportRequest>(
      REPORT_GENERATION_JOB,
      { month },
      { uniqueKey: `report:${month}` },
    );
    return toJobResponse(job);
  }
}

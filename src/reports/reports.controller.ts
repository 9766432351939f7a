import { Body, Controller, Get, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import { RequestReportDto } from './dto/request-report.dto';
import {
  MONTHLY_MERGE_JOB,
  MONTHLY_MERGE_STEP,
  MONTHLY_REGION_JOB,
  REPORT_GENERATION_JOB,
  REPORT_REGIONS,
  ReportRequest,
} from './reports.constants';

/** A monthly report's flow: its id (to cancel it), the merge's job and each region's. */
export interface MonthlyReportResponse {
  flowId: string;
  /** The merge: `blocked` until every region has completed; `GET /jobs/:id` shows its result. */
  report: JobResponse;
  regions: JobResponse[];
}

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

  /**
   * `{ "month": "2026-11" }` → a flow, written in one statement: one job per region, which any
   * workers run side by side, and the merge, which waits for all of them (a tree: the merge is
   * the root, the regions its children). A flow's jobs take no `uniqueKey`, so each request makes
   * a new flow.
   */
  @Post('monthly')
  async monthly(@Body() { month }: RequestReportDto): Promise<MonthlyReportResponse> {
    const { flowId, steps } = await this.queue.flow({
      name: MONTHLY_MERGE_STEP,
      type: MONTHLY_MERGE_JOB,
      data: { month },
      children: REPORT_REGIONS.map((region) => ({
        name: region,
        type: MONTHLY_REGION_JOB,
        data: { month, region },
      })),
    });
    return {
      flowId,
      report: toJobResponse(steps[MONTHLY_MERGE_STEP]),
      regions: REPORT_REGIONS.map((region) => toJobResponse(steps[region])),
    };
  }

  /**
   * A monthly report as it stands: the merge (its `result` the report, once completed) and each
   * region's job, read by `getFlow`. An operator's route, like `GET /jobs/:id`. A flow id that
   * is not a UUID is a 400 naming `flowId`; one with no job left (unknown, or pruned) a 404.
   */
  @Get('monthly/:flowId')
  @UseGuards(AdminTokenGuard)
  async monthlyReport(@Param('flowId') flowId: string): Promise<MonthlyReportResponse> {
    const jobs = await this.queue.getFlow(flowId);
    const report = jobs.find((job) => job.stepName === MONTHLY_MERGE_STEP);
    if (!report) throw new NotFoundException(`No monthly report has flow id ${flowId}`);
    return {
      flowId: report.flowId ?? flowId,
      report: toJobResponse(report),
      regions: jobs.filter((job) => job !== report).map(toJobResponse),
    };
  }

  /**
   * Cancels what the flow has not finished (running regions see their signal abort, the merge
   * never runs) and answers those jobs; an operator's route, so it wants the admin token. A
   * flow id that is not a UUID is a 400 naming `flowId`.
   */
  @Post('monthly/:flowId/cancel')
  @UseGuards(AdminTokenGuard)
  async cancelMonthly(@Param('flowId') flowId: string): Promise<JobResponse[]> {
    return (await this.queue.cancelFlow(flowId)).map(toJobResponse);
  }
}

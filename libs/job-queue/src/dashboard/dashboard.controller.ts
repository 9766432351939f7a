import {
  Controller,
  Get,
  Headers,
  MessageEvent,
  Param,
  Post,
  Query,
  Req,
  Res,
  Sse,
  Type,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import { DASHBOARD_CSS } from './assets/dashboard-css.asset';
import { DASHBOARD_JS } from './assets/dashboard-js.asset';
import { DashboardAccessGuard } from './dashboard-access.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardPages } from './dashboard.pages';
import { DashboardHttp, DashboardRequest } from './dashboard.http';
import { checkCsrf } from './csrf';
import { followJob } from './job-stream';
import { DashboardQueue } from './dashboard.queue';

/** A query parameter as one string: a repeated one counts by its first value. */
function one(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/**
 * The dashboard's routes, as a class made for one `path` (Nest reads a controller's path from its
 * decorator, so a path given at registration needs a class of its own). Every route passes
 * `DashboardAccessGuard`, and every error becomes a page (`DashboardExceptionFilter`).
 * Responses go through the HTTP adapter (`@Res()`), the same on Express and Fastify.
 */
export function createDashboardController(path: string): Type<unknown> {
  @Controller(path)
  @UseGuards(DashboardAccessGuard)
  @UseFilters(DashboardExceptionFilter)
  class JobQueueDashboardController {
    constructor(
      private readonly pages: DashboardPages,
      private readonly queue: DashboardQueue,
      private readonly http: DashboardHttp,
    ) {}

    @Get()
    async overview(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Query('notice') notice: unknown,
      @Query('job') job: unknown,
    ): Promise<void> {
      this.http.page(res, 200, await this.pages.overview(req, res, one(notice), one(job)));
    }

    @Get('jobs')
    async jobs(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Query() query: Record<string, unknown>,
    ): Promise<void> {
      const filters = {
        id: one(query.id),
        type: one(query.type),
        status: one(query.status),
        key: one(query.key),
      };
      const page = await this.pages.jobs(req, res, filters, one(query.cursor));
      this.http.page(res, 200, page);
    }

    @Get('jobs/:id')
    async job(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Param('id') id: string,
      @Query('notice') notice: unknown,
    ): Promise<void> {
      this.http.page(res, 200, await this.pages.job(req, res, id, one(notice)));
    }

    @Get('flows/:flowId')
    async flow(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Param('flowId') flowId: string,
      @Query('notice') notice: unknown,
      @Query('count') count: unknown,
    ): Promise<void> {
      this.http.page(res, 200, await this.pages.flow(req, res, flowId, one(notice), one(count)));
    }

    /**
     * The job page's live stream (Server-Sent Events). The job is read first, so that an unknown
     * one is a 404 rather than a stream; `Last-Event-ID` (a reconnecting browser) wins over
     * `after` (the page's last log row).
     */
    @Sse('jobs/:id/stream')
    async stream(
      @Param('id') id: string,
      @Query('after') after: unknown,
      @Headers('last-event-id') lastEventId: string | undefined,
    ): Promise<Observable<MessageEvent>> {
      const job = await this.queue.queue.getJob(id);
      return followJob(this.queue.queue, job.id, lastEventId || one(after));
    }

    @Get('assets/dashboard.css')
    css(@Res() res: unknown): void {
      this.http.setHeader(res, 'Cache-Control', 'no-cache');
      this.http.send(res, 200, 'text/css; charset=utf-8', DASHBOARD_CSS);
    }

    @Get('assets/dashboard.js')
    js(@Res() res: unknown): void {
      this.http.setHeader(res, 'Cache-Control', 'no-cache');
      this.http.send(res, 200, 'text/javascript; charset=utf-8', DASHBOARD_JS);
    }

    @Post('jobs/:id/retry')
    async retry(@Req() req: DashboardRequest, @Res() res: unknown, @Param('id') id: string) {
      checkCsrf(req);
      const job = await this.queue.queue.retry(id);
      this.http.seeOther(res, this.pages.jobUrl(job.id, 'retried'));
    }

    @Post('jobs/:id/cancel')
    async cancel(@Req() req: DashboardRequest, @Res() res: unknown, @Param('id') id: string) {
      checkCsrf(req);
      const job = await this.queue.queue.cancel(id);
      this.http.seeOther(res, this.pages.jobUrl(job.id, 'cancelled'));
    }

    /** Cancels what the flow has not finished; 404 (nothing changed) for a flow with no job. */
    @Post('flows/:flowId/cancel')
    async cancelFlow(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Param('flowId') flowId: string,
    ) {
      checkCsrf(req);
      const cancelled = await this.queue.queue.cancelFlow(flowId);
      const [job] = cancelled.length ? cancelled : await this.pages.flowJobs(flowId);
      const id = job.flowId ?? flowId;
      this.http.seeOther(res, this.pages.flowUrl(id, 'flow-cancelled', cancelled.length));
    }

    @Post('types/:type/pause')
    async pause(@Req() req: DashboardRequest, @Res() res: unknown, @Param('type') type: string) {
      checkCsrf(req);
      await this.queue.queue.pause(type);
      this.http.seeOther(res, this.pages.overviewUrl('paused'));
    }

    @Post('types/:type/resume')
    async resume(@Req() req: DashboardRequest, @Res() res: unknown, @Param('type') type: string) {
      checkCsrf(req);
      await this.queue.queue.resume(type);
      this.http.seeOther(res, this.pages.overviewUrl('resumed'));
    }

    @Post('schedules/:name/run')
    async runSchedule(
      @Req() req: DashboardRequest,
      @Res() res: unknown,
      @Param('name') name: string,
    ) {
      checkCsrf(req);
      const job = await this.queue.queue.runSchedule(name);
      this.http.seeOther(res, this.pages.overviewUrl('schedule-run', job.id));
    }
  }
  return JobQueueDashboardController;
}

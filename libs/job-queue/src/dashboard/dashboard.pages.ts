import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { Job } from '../entities/job.entity';
import { JobStatus } from '../entities/job-status.enum';
import { csrfCookie, csrfCookieToken, newCsrfToken } from './csrf';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { NO_FLOW } from './dashboard.messages';
import { DashboardHttp, DashboardRequest } from './dashboard.http';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { DashboardQueue } from './dashboard.queue';
import { html, SafeHtml } from './html/escape';
import { PageContext, withQuery } from './html/layout';
import { flowPage } from './pages/flow.page';
import { jobPage } from './pages/job.page';
import { JobFilters, jobsPage } from './pages/jobs.page';
import { overviewPage } from './pages/overview.page';

/** Most log rows a job's page shows (the live stream adds the rest). */
const JOB_PAGE_LOG_ROWS = 1_000;

/**
 * The notices an action's redirect may ask for (`?notice=<code>`): fixed texts, so that a link
 * cannot make the dashboard say what its sender wants.
 */
const NOTICES: Record<string, string> = {
  retried: 'Retried: the job runs again, with a fresh set of attempts.',
  cancelled: 'Cancelled.',
  paused: 'Paused: no worker takes jobs of the type until it is resumed.',
  resumed: 'Resumed: workers take jobs of the type again.',
  'schedule-run': 'Schedule run now: its job was enqueued',
  'flow-cancelled': 'Flow cancelled',
};

/** Each page: its data read from the queue, its CSRF token, its markup. */
@Injectable()
export class DashboardPages {
  constructor(
    private readonly queue: DashboardQueue,
    private readonly http: DashboardHttp,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  overviewUrl(notice: string, jobId?: string): string {
    return withQuery(this.http.basePath(), { notice, job: jobId });
  }

  jobUrl(id: string, notice?: string): string {
    return withQuery(`${this.http.basePath()}/jobs/${encodeURIComponent(id)}`, { notice });
  }

  flowUrl(flowId: string, notice?: string, count?: number): string {
    return withQuery(`${this.http.basePath()}/flows/${encodeURIComponent(flowId)}`, {
      notice,
      count: count === undefined ? undefined : String(count),
    });
  }

  async overview(
    req: DashboardRequest,
    res: unknown,
    notice: string | undefined,
    jobId: string | undefined,
  ): Promise<SafeHtml> {
    const { queue } = this.queue;
    const [stats, schedules, throughput] = await Promise.all([
      queue.stats(),
      queue.schedules(),
      this.queue.throughput(),
    ]);
    const ctx = this.context(req, res, notice);
    if (ctx.notice && notice === 'schedule-run' && jobId && /^\d+$/.test(jobId)) {
      ctx.notice = html`${ctx.notice}: <a href="${this.jobUrl(jobId)}">job ${jobId}</a>.`;
    }
    return overviewPage(ctx, { stats, schedules, throughput });
  }

  async jobs(
    req: DashboardRequest,
    res: unknown,
    filters: JobFilters,
    cursor: string | undefined,
  ): Promise<SafeHtml> {
    const page = await this.queue.queue.listJobs({
      id: filters.id,
      type: filters.type,
      status: filters.status as JobStatus | undefined,
      uniqueKeyPrefix: filters.key,
      cursor,
    });
    return jobsPage(this.context(req, res), filters, page.jobs, page.nextCursor);
  }

  async job(
    req: DashboardRequest,
    res: unknown,
    id: string,
    notice: string | undefined,
  ): Promise<SafeHtml> {
    const { queue } = this.queue;
    const job = await queue.getJob(id);
    const [events, related] = await Promise.all([
      queue.jobEvents(job.id, { limit: JOB_PAGE_LOG_ROWS }),
      // Read only for a job with edges: one that waits (it has a policy) or is waited for.
      job.onDependencyFailure !== null || job.hasDependants
        ? this.queue.dependencies(job.id)
        : undefined,
    ]);
    return jobPage(this.context(req, res, notice), job, events, related);
  }

  /** A flow's jobs; 404 for a flow none of whose jobs is left (unknown, or pruned whole). */
  async flow(
    req: DashboardRequest,
    res: unknown,
    flowId: string,
    notice: string | undefined,
    count: string | undefined,
  ): Promise<SafeHtml> {
    const jobs = await this.flowJobs(flowId);
    const ctx = this.context(req, res, notice);
    if (ctx.notice && notice === 'flow-cancelled') {
      ctx.notice =
        count !== undefined && /^\d{1,9}$/.test(count)
          ? `${ctx.notice}: ${count} unfinished job(s) cancelled.`
          : `${ctx.notice}.`;
    }
    return flowPage(ctx, jobs[0].flowId ?? flowId, jobs);
  }

  /** The flow's jobs (`InvalidJobInputError` for a bad id); `NotFoundException` for none. */
  async flowJobs(flowId: string): Promise<Job[]> {
    const jobs = await this.queue.queue.getFlow(flowId);
    if (jobs.length === 0) throw new NotFoundException(NO_FLOW(flowId));
    return jobs;
  }

  /**
   * The page's context, with the request's CSRF token: the cookie's when it has one, else a
   * new one set in a cookie scoped to the dashboard's path.
   */
  private context(req: DashboardRequest, res: unknown, notice?: string): PageContext {
    const base = this.http.basePath();
    let csrf = csrfCookieToken(req);
    if (csrf === undefined) {
      csrf = newCsrfToken();
      this.http.setHeader(res, 'Set-Cookie', csrfCookie(csrf, base, req.protocol === 'https'));
    }
    return {
      base,
      title: this.options.title,
      csrf,
      notice: notice === undefined ? undefined : NOTICES[notice],
    };
  }
}

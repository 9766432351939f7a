import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, JobContext, JobHandler, PermanentJobError } from 'nest-pg-job-queue';
import {
  MONTHLY_MERGE_JOB,
  MONTHLY_REGION_JOB,
  MonthlyReportResult,
  REPORT_REGIONS,
  RegionFigures,
  RegionReportRequest,
  ReportRequest,
} from './reports.constants';

/** Days a region's job counts between two progress reports. */
const DAYS_PER_STAGE = 7;

/**
 * A day's orders and average order value in a region: made up, but the same for the same day
 * and region on every run, as a real query over a closed month would be.
 */
function dayFigures(month: string, region: string, day: number) {
  const digest = createHash('sha256').update(`${month}/${region}/${day}`).digest();
  return {
    orders: 50 + (digest.readUInt32BE(0) % 200),
    averageCents: 2_000 + (digest[4] % 100) * 30,
  };
}

/**
 * The monthly report (`POST /reports/monthly`): a flow of one job per region, which run side by
 * side on any worker, and a merge that the queue holds `blocked` until every region's job has
 * completed, then runs once with their results.
 */
@Injectable()
export class MonthlyReportHandlers {
  /** One region's month, a week at a time, reporting progress after each. */
  @JobHandler(MONTHLY_REGION_JOB, { maxAttempts: 3, timeoutMs: 300_000 })
  async region(job: Job<RegionReportRequest>, ctx: JobContext): Promise<RegionFigures> {
    const { month, region } = job.data;
    const [year, monthNumber] = month.split('-').map(Number);
    const days = new Date(Date.UTC(year, monthNumber, 0)).getUTCDate(); // day 0 of the next month
    const stages = Math.ceil(days / DAYS_PER_STAGE);
    const stageMs = Number(process.env.REGION_WORK_MS ?? 1_000) / stages;
    let orders = 0;
    let revenueCents = 0;
    for (let first = 1; first <= days; first += DAYS_PER_STAGE) {
      const last = Math.min(first + DAYS_PER_STAGE - 1, days);
      await ctx.progress(Math.floor(((first - 1) / days) * 100), `days ${first}-${last}`);
      for (let day = first; day <= last; day++) {
        const figures = dayFigures(month, region, day);
        orders += figures.orders;
        revenueCents += figures.orders * figures.averageCents;
      }
      // Stands in for the region's query; the signal stops it at once on cancel or shutdown.
      await sleep(stageMs, undefined, { signal: ctx.signal });
    }
    await ctx.progress(100, 'done');
    return { region, month, days, orders, revenueCents };
  }

  /**
   * Runs once every region's job has completed (a region that fails for good, or is cancelled,
   * fails the merge instead: the flow's default `onDependencyFailure: 'fail'`), and combines what
   * they returned, read from the database by step name.
   */
  @JobHandler(MONTHLY_MERGE_JOB, { maxAttempts: 3, timeoutMs: 60_000 })
  async merge(job: Job<ReportRequest>, ctx: JobContext): Promise<MonthlyReportResult> {
    const { byStep } = await ctx.dependencyResults();
    const regions: Record<string, RegionFigures> = {};
    const totals = { orders: 0, revenueCents: 0 };
    for (const region of REPORT_REGIONS) {
      const figures = byStep[region]?.result as RegionFigures | null | undefined;
      if (!figures) throw new PermanentJobError(`No figures for region ${region}`);
      regions[region] = figures;
      totals.orders += figures.orders;
      totals.revenueCents += figures.revenueCents;
    }
    await ctx.progress(100, 'merged');
    return { month: job.data.month, regions, totals };
  }
}

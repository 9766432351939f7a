import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, JobContext, JobHandler } from 'nest-pg-job-queue';
import {
  REPORT_GENERATION_JOB,
  REPORT_STAGES,
  ReportRequest,
  ReportResult,
} from './reports.constants';

/** Builds a monthly report in named stages, reporting progress as it goes. */
@Injectable()
export class ReportHandlers {
  @JobHandler(REPORT_GENERATION_JOB, { concurrency: 5, maxAttempts: 5, timeoutMs: 600_000 })
  async generate(job: Job<ReportRequest>, ctx: JobContext): Promise<ReportResult> {
    const stageMs = Number(process.env.REPORT_STAGE_MS ?? 500);
    let done = 0;
    for (const [stage, progress] of REPORT_STAGES) {
      await ctx.progress(done, stage);
      // A line in the job's log (GET /jobs/:id/events streams it): written with the progress.
      ctx.log(`${stage} for ${job.data.month}`);
      // Passing the signal stops the work at once on cancel, timeout or shutdown.
      await sleep(stageMs, undefined, { signal: ctx.signal });
      done = progress;
    }
    await ctx.progress(100, 'done');
    return { month: job.data.month, rows: 1200, url: `reports/${job.data.month}.pdf` };
  }
}

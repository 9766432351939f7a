import { Injectable } from '@nestjs/common';
import { Job, JobHandler } from 'nest-pg-job-queue';
import {
  DAILY_REPORT_CRON,
  DAILY_REPORT_JOB,
  DAILY_REPORT_TIMEZONE,
  DailyReportResult,
} from './reports.constants';

/** `YYYY-MM-DD` of an instant, in the report's zone. */
const berlinDay = new Intl.DateTimeFormat('en-CA', { timeZone: DAILY_REPORT_TIMEZONE });

/**
 * Yesterday's report, every day at 06:00 in Berlin. The queue enqueues one job per day however
 * many instances of this app run; a day missed while none ran is made up once when one is back.
 */
@Injectable()
export class DailyReportHandler {
  @JobHandler(DAILY_REPORT_JOB, { cron: DAILY_REPORT_CRON, timezone: DAILY_REPORT_TIMEZONE })
  async run(job: Job<null>): Promise<DailyReportResult> {
    // runAt is the fire time, even when the job runs late: the report is for the day before it.
    const day = berlinDay.format(new Date(job.runAt.getTime() - 24 * 3_600_000));
    return { day, rows: 1200 };
  }
}

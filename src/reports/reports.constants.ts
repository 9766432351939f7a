export const REPORT_GENERATION_JOB = 'report_generation';

export interface ReportRequest {
  month: string;
}

export interface ReportResult {
  month: string;
  rows: number;
  url: string;
}

/** The stages a report goes through, with the progress reached at the end of each. */
export const REPORT_STAGES: ReadonlyArray<readonly [stage: string, progress: number]> = [
  ['loading', 20],
  ['aggregating', 50],
  ['rendering', 80],
  ['uploading', 100],
];

/** The daily report: enqueued by its cron, once a day across every running node. */
export const DAILY_REPORT_JOB = 'report.daily';
export const DAILY_REPORT_CRON = '0 6 * * *';
export const DAILY_REPORT_TIMEZONE = 'Europe/Berlin';

export interface DailyReportResult {
  /** The day it covers: the day before the fire time, in Berlin. */
  day: string;
  rows: number;
}

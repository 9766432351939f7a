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

/**
 * The monthly report as a flow (`QueueService.flow`): one job per region, all at once, then a
 * merge that waits for every one of them and combines their figures.
 */
export const MONTHLY_REGION_JOB = 'report.monthly.region';
export const MONTHLY_MERGE_JOB = 'report.monthly.merge';

/** The regions a monthly report covers: one job, and one step of the flow, each. */
export const REPORT_REGIONS = ['eu-west', 'eu-north', 'us-east', 'us-west', 'apac', 'latam'];

/** The merge's step name in the flow; the regions' steps are named by their region. */
export const MONTHLY_MERGE_STEP = 'merge';

export interface RegionReportRequest {
  month: string;
  region: string;
}

/** What one region's job returns, and the merge reads. */
export interface RegionFigures {
  region: string;
  month: string;
  /** Days of the month it counted. */
  days: number;
  orders: number;
  revenueCents: number;
}

/** What the merge returns: every region's figures and their sums. */
export interface MonthlyReportResult {
  month: string;
  regions: Record<string, RegionFigures>;
  totals: { orders: number; revenueCents: number };
}

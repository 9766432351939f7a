// `nest-pg-job-queue/dashboard`: a dashboard served by the app itself, server-rendered, with no
// front-end build and no dependency beyond the package's peers.
export { JobQueueDashboardModule } from './dashboard.module';
export { DEFAULT_DASHBOARD_PATH } from './dashboard.options';
export type { JobQueueDashboardAsyncOptions, JobQueueDashboardOptions } from './dashboard.options';

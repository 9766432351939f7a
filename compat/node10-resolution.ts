// Compiled by compat/app.sh with `"moduleResolution": "node"` (node10), which ignores the
// package's `exports`: every entry point must resolve through its `typesVersions` instead.
import type { JobQueueModule } from 'nest-pg-job-queue';
import type { JobQueueDashboardModule } from 'nest-pg-job-queue/dashboard';
import type { JobQueueTracingModule } from 'nest-pg-job-queue/opentelemetry';
import type { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import type { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import type { JobQueueTester } from 'nest-pg-job-queue/testing';

export type EveryEntryPoint = [
  JobQueueModule,
  JobQueueDashboardModule,
  JobQueueTracingModule,
  JobQueueMetricsModule,
  JobQueueHealthIndicator,
  JobQueueTester,
];

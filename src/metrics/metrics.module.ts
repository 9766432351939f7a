import { Module } from '@nestjs/common';
import { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import { MetricsController } from './metrics.controller';

/**
 * The queue's metrics for Prometheus: counters and histograms of what this instance enqueued
 * and ran, and gauges of the queue's jobs and this worker's slots, served at `GET /metrics`.
 */
@Module({
  // The defaults: prom-client's default registry, names prefixed `job_queue_`.
  imports: [JobQueueMetricsModule.forRoot()],
  controllers: [MetricsController],
})
export class MetricsModule {}

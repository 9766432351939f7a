// The health, metrics and tracing entry points from the tarball (compat/run.sh copies this file
// into the apps that install their peers: @nestjs/terminus, prom-client, @opentelemetry/api).
// main.ts imports it after the README's app ran: one job run with all three registered, then
// terminus says healthy, the metrics count the run, and tracing stored a trace context in meta
// (an SDK-less app: the API's no-op tracer, so no context to store).
import assert from 'node:assert/strict';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobHandler, JobQueueModule, JobStatus, QueueService } from 'nest-pg-job-queue';
import { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import { JobQueueTracingModule } from 'nest-pg-job-queue/opentelemetry';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import { Registry } from 'prom-client';

const JOB_DEADLINE_MS = 30_000;

@Injectable()
class ObservedHandler {
  @JobHandler('compat.observed')
  run(): string {
    return 'seen';
  }
}

/** Boots an app with the three entry points on `url` (a migrated database), runs one job. */
export async function runObserved(url: string, app: string): Promise<void> {
  const registry = new Registry();
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, retryAttempts: 0 }),
      JobQueueModule.forRoot({ worker: { pollIntervalMs: 50 } }),
      JobQueueMetricsModule.forRoot({ registry }),
      JobQueueTracingModule.forRoot(),
      TerminusModule,
    ],
    providers: [ObservedHandler, JobQueueHealthIndicator],
  })
  class ObservedModule {}

  const nest = await NestFactory.createApplicationContext(ObservedModule, { logger: ['error'] });
  try {
    const queue = nest.get(QueueService);
    const job = await queue.enqueue('compat.observed', {});
    const deadline = Date.now() + JOB_DEADLINE_MS;
    while ((await queue.getJob(job.id)).status !== JobStatus.Completed) {
      assert.ok(Date.now() < deadline, `job ${job.id} did not complete`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const metrics = await registry.metrics();
    assert.match(metrics, /job_queue_jobs_completed_total\{type="compat\.observed"\} 1/);
    const health = await nest
      .get(HealthCheckService)
      .check([() => nest.get(JobQueueHealthIndicator).isHealthy('jobQueue')]);
    assert.equal(health.status, 'ok');
    console.log(
      `PASS compat ${app}: nest-pg-job-queue/terminus (status ${health.status}), /prometheus ` +
        '(1 completed counted), /opentelemetry (loaded, no SDK) from the tarball',
    );
  } finally {
    await nest.close();
  }
}

import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';

/**
 * GET /health: the readiness probe, open like a load balancer expects it. 200 while the queue's
 * database answers and this instance's worker polls, no job has waited for its turn more than
 * five minutes and no job is held past its lease; 503 with the reason otherwise.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly jobQueue: JobQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () =>
        this.jobQueue.isHealthy('jobQueue', { maxDueWaitMs: 5 * 60_000, failOnStaleJobs: true }),
    ]);
  }
}

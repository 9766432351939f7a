import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { JobQueueHealthIndicator } from 'nest-pg-job-queue/terminus';
import { HealthController } from './health.controller';

/** The example's readiness probe, through @nestjs/terminus and the queue's indicator. */
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [JobQueueHealthIndicator],
})
export class HealthModule {}

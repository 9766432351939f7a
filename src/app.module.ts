import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Job, JobQueueModule } from 'nest-pg-job-queue';
import { exampleAppMigrations } from '../migrations';
import { AuditLog } from './audit/audit-log.entity';
import { HttpErrorFilter } from './common/http-error.filter';
import { RequestValidationPipe } from './common/validation/request-validation.pipe';
import { DashboardModule } from './dashboard/dashboard.module';
import { EmailsModule } from './emails/emails.module';
import { HealthModule } from './health/health.module';
import { ImagesModule } from './images/images.module';
import { JobsModule } from './jobs/jobs.module';
import { MetricsModule } from './metrics/metrics.module';
import { ReportsModule } from './reports/reports.module';

/** An optional number from the environment; the queue checks its range at boot. */
function envInt(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : Number(value);
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: () => ({
        type: 'postgres',
        url: process.env.DATABASE_URL,
        entities: [Job, AuditLog],
        migrations: exampleAppMigrations,
        migrationsRun: true,
      }),
    }),
    JobQueueModule.forRootAsync({
      isGlobal: true,
      useFactory: () => ({
        worker: { concurrency: envInt('WORKER_CONCURRENCY') ?? 4 },
        staleAfterMs: envInt('STALE_AFTER_MS') ?? 30_000,
        reaperIntervalMs: envInt('REAPER_INTERVAL_MS'),
        // GET /jobs/:id/events follows a job whichever instance runs it (opt-in: it costs each
        // claim and outcome write a NOTIFY, see the library's README, "Job events").
        events: { remote: true },
      }),
    }),
    ImagesModule,
    ReportsModule,
    EmailsModule,
    JobsModule,
    MetricsModule,
    HealthModule,
    DashboardModule,
  ],
  providers: [
    { provide: APP_FILTER, useClass: HttpErrorFilter },
    // Every DTO (@Body, @Query) is transformed and validated, with the example's error shape.
    { provide: APP_PIPE, useClass: RequestValidationPipe },
  ],
})
export class AppModule {}

import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Job, JobQueueModule, jobQueueMigrations } from '@app/job-queue';
import { JobQueueExceptionFilter } from './common/job-queue-exception.filter';
import { ImagesModule } from './images/images.module';
import { JobsModule } from './jobs/jobs.module';
import { ReportsModule } from './reports/reports.module';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: () => ({
        type: 'postgres',
        url: process.env.DATABASE_URL,
        entities: [Job],
        migrations: jobQueueMigrations,
        migrationsRun: true,
      }),
    }),
    JobQueueModule.forRootAsync({
      isGlobal: true,
      useFactory: () => ({
        worker: { concurrency: Number(process.env.WORKER_CONCURRENCY ?? 4) },
        staleAfterMs: Number(process.env.STALE_AFTER_MS ?? 30_000),
      }),
    }),
    ImagesModule,
    ReportsModule,
    JobsModule,
  ],
  providers: [{ provide: APP_FILTER, useClass: JobQueueExceptionFilter }],
})
export class AppModule {}

import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../options/resolved-options';
import { queueDatabase } from '../queue/queue-database';
import { QueueService } from '../queue.service';
import { JobDependencies, readJobDependencies } from './job-dependencies.query';
import { readThroughput, Throughput } from './throughput.query';

/** How many of a type's jobs per status the chart reads at most (see `readThroughput`). */
const THROUGHPUT_ROWS_PER_TYPE = 20_000;
/** How many of a job's dependencies, and of its dependants, its page lists at most. */
const RELATED_JOBS_PER_SIDE = 100;

/**
 * The app's queue, as the dashboard reads and changes it: `QueueService` for everything it
 * offers, and queries of its own for the chart and for a job's edges. Found in the app's `JobQueueModule`, global or
 * not, as the other entry points find it.
 */
@Injectable()
export class DashboardQueue implements OnModuleInit {
  private service: QueueService;
  private options: ResolvedJobQueueOptions;
  private dataSource: DataSource;

  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    const get = <T>(token: unknown): T => {
      try {
        return this.moduleRef.get<T>(token as never, { strict: false });
      } catch {
        throw new Error(
          'JobQueueDashboardModule needs the app to import JobQueueModule (forRoot or forRootAsync)',
        );
      }
    };
    this.service = get(QueueService);
    this.options = get(RESOLVED_JOB_QUEUE_OPTIONS);
    this.dataSource = get(JOB_QUEUE_DATA_SOURCE);
  }

  get queue(): QueueService {
    return this.service;
  }

  throughput(): Promise<Throughput> {
    const db = queueDatabase(this.dataSource, this.options.databaseTimeoutMs);
    return readThroughput(db, this.options.schema, THROUGHPUT_ROWS_PER_TYPE);
  }

  /** The jobs job `jobId` (an id `getJob` has read) waits for, and those that wait for it. */
  dependencies(jobId: string): Promise<JobDependencies> {
    const db = queueDatabase(this.dataSource, this.options.databaseTimeoutMs);
    return readJobDependencies(db, this.options.schema, jobId, RELATED_JOBS_PER_SIDE);
  }
}

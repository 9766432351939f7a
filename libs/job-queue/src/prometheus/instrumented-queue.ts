import { Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { JobQueueInstruments } from '../instrumentation/job-queue-instruments';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { RunningJobs } from '../worker/running-jobs';

/** What the metrics read of the app's queue. */
export interface InstrumentedQueue {
  instruments: JobQueueInstruments;
  options: ResolvedJobQueueOptions;
  dataSource: DataSource;
  running: RunningJobs;
}

/**
 * The app's queue, wherever its module is (global or not: `strict: false` looks in every
 * module). With two queues in one app (two schemas), the one registered last.
 */
export function findInstrumentedQueue(moduleRef: ModuleRef): InstrumentedQueue {
  const get = <T>(token: symbol | Type<T>): T => moduleRef.get<T>(token, { strict: false });
  let instruments: JobQueueInstruments;
  try {
    instruments = get(JobQueueInstruments);
  } catch (error) {
    throw new Error(
      'JobQueueMetricsModule found no job queue in this app: import JobQueueModule.forRoot() ' +
        '(or forRootAsync) in the same app',
      { cause: error },
    );
  }
  return {
    instruments,
    options: get(RESOLVED_JOB_QUEUE_OPTIONS),
    dataSource: get(JOB_QUEUE_DATA_SOURCE),
    running: get(RunningJobs),
  };
}

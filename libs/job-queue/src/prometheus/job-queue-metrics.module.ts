import {
  DynamicModule,
  Inject,
  Module,
  OnModuleDestroy,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { register } from 'prom-client';
import { findInstrumentedQueue } from './instrumented-queue';
import { createJobMetrics } from './job-metrics';
import { metricsPrefix } from './job-queue-metrics.options';
// `import type`: a type in a decorated signature (TS1272 under isolatedModules).
import type { JobQueueMetricsOptions } from './job-queue-metrics.options';
import { JobStatsSnapshot } from './job-stats-snapshot';
import { jobStatusGauges } from './job-status-gauges';
import { metricsInstrument } from './metrics-instrument';
import { registerMetrics } from './registered-metrics';
import { workerSlotsGauge } from './worker-slots-gauge';

const METRICS_OPTIONS = Symbol('JOB_QUEUE_METRICS_OPTIONS');

/**
 * The queue's metrics through prom-client: import `JobQueueMetricsModule.forRoot()` (or the
 * module itself, for the defaults) beside `JobQueueModule`, and serve the registry's `metrics()`
 * where Prometheus scrapes. At init it registers the metrics and adds its instrument to the
 * queue; at close it removes both, so an app can be created again in the same process.
 *
 * @publicApi
 */
@Module({})
export class JobQueueMetricsModule implements OnModuleInit, OnModuleDestroy {
  private readonly options: JobQueueMetricsOptions;
  private readonly prefix: string;
  private removals: Array<() => void> = [];

  /** @internal Nest's injector makes it. */
  constructor(
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(METRICS_OPTIONS) options?: JobQueueMetricsOptions,
  ) {
    this.options = options ?? {};
    this.prefix = metricsPrefix(this.options);
  }

  /** `registry`: default prom-client's `register`; `prefix`: default `job_queue_`. */
  static forRoot(options: JobQueueMetricsOptions = {}): DynamicModule {
    metricsPrefix(options); // a bad prefix fails where the module is defined
    return {
      module: JobQueueMetricsModule,
      providers: [{ provide: METRICS_OPTIONS, useValue: options }],
    };
  }

  onModuleInit(): void {
    const queue = findInstrumentedQueue(this.moduleRef);
    const { worker, schema } = queue.options;
    // The counters call the instrument made from them (never before it exists: nothing reads
    // them before they are registered, below): it counts runs between their reads.
    const metrics = createJobMetrics(this.prefix, () => instrument.flush());
    const instrument = metricsInstrument(metrics);
    const gauges = jobStatusGauges(this.prefix, new JobStatsSnapshot(queue.dataSource, schema));
    if (worker) gauges.push(workerSlotsGauge(this.prefix, queue.running, worker.concurrency));
    const registry = this.options.registry ?? register;
    // Registered first: when a name is taken, the boot fails before the queue reports to them.
    this.removals.push(registerMetrics(registry, [...Object.values(metrics), ...gauges]));
    this.removals.push(queue.instruments.add(instrument));
  }

  onModuleDestroy(): void {
    for (const remove of this.removals.reverse()) remove();
    this.removals = [];
  }
}

import { DynamicModule, Inject, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { trace } from '@opentelemetry/api';
import { JobQueueInstruments } from '../instrumentation/job-queue-instruments';
import { tracingInstrument } from './tracing-instrument';

/** Options of `JobQueueTracingModule.forRoot`. @publicApi */
export interface JobQueueTracingOptions {
  /** The tracer's name (`trace.getTracer(name)`). Default: `nest-pg-job-queue`. */
  tracerName?: string;
}

const TRACING_OPTIONS = Symbol('JOB_QUEUE_TRACING_OPTIONS');

/**
 * Traces the queue through `@opentelemetry/api` (see `tracingInstrument`): import it beside
 * `JobQueueModule` in every app that enqueues or runs jobs, after the app's OpenTelemetry SDK is
 * set up. It adds its instrument to the queue of its app at init and removes it at close.
 *
 * @publicApi
 */
@Module({})
export class JobQueueTracingModule implements OnModuleInit, OnModuleDestroy {
  private remove: (() => void) | undefined;

  /** @internal Nest's injector makes it. */
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(TRACING_OPTIONS) private readonly options: JobQueueTracingOptions,
  ) {}

  static forRoot(options: JobQueueTracingOptions = {}): DynamicModule {
    return {
      module: JobQueueTracingModule,
      providers: [{ provide: TRACING_OPTIONS, useValue: options }],
    };
  }

  onModuleInit(): void {
    // The queue's module may or may not be global: find its instruments wherever they are.
    const instruments = this.moduleRef.get(JobQueueInstruments, { strict: false });
    const tracer = trace.getTracer(this.options.tracerName ?? 'nest-pg-job-queue');
    this.remove = instruments.add(tracingInstrument(tracer));
  }

  onModuleDestroy(): void {
    this.remove?.();
    this.remove = undefined;
  }
}

import { Test } from '@nestjs/testing';
import { Counter, register, Registry } from 'prom-client';
import { JobQueueMetricsModule } from 'nest-pg-job-queue/prometheus';
import { useWorkerTestFile } from '../support/worker-test-app';

/** Every metric the module registers, but `worker_slots` (only with a worker), unprefixed. */
const METRICS = [
  'job_run_seconds',
  'job_wait_seconds',
  'jobs',
  'jobs_cancelled_total',
  'jobs_completed_total',
  'jobs_enqueued_total',
  'jobs_failed_total',
  'jobs_rescued_total',
  'jobs_retried_total',
  'jobs_snapshot_age_seconds',
  'jobs_snoozed_total',
  'jobs_started_total',
];

const namesIn = (registry: Registry): string[] =>
  registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .sort();

describe('prometheus: where the metrics are registered', () => {
  const file = useWorkerTestFile();

  it('uses the registry and the prefix given, and nothing of the default register', async () => {
    const registry = new Registry();
    const app = await file.start({
      queueOptions: { worker: false },
      imports: [JobQueueMetricsModule.forRoot({ registry, prefix: 'billing_' })],
    });
    expect(namesIn(registry)).toEqual(METRICS.map((name) => `billing_${name}`));
    expect(namesIn(register)).toEqual([]);

    await app.queue.enqueue('invoice.send', {});
    expect(await registry.metrics()).toContain(
      'billing_jobs_enqueued_total{type="invoice.send"} 1\n',
    );

    await app.close();
    expect(namesIn(registry)).toEqual([]);
  });

  it("uses prom-client's default register when given none; a second app registers again once the first closed", async () => {
    // Imported without forRoot: the defaults.
    const first = await file.start({ imports: [JobQueueMetricsModule] });
    expect(namesIn(register)).toEqual(
      [...METRICS, 'worker_slots'].map((name) => `job_queue_${name}`).sort(),
    );
    await first.queue.enqueue('report.build', {});
    await first.close();
    expect(namesIn(register)).toEqual([]);

    const second = await file.start({ imports: [JobQueueMetricsModule.forRoot()] });
    await second.queue.enqueue('report.build', {});
    // Its own metrics, counted from 0.
    expect(await register.metrics()).toContain(
      'job_queue_jobs_enqueued_total{type="report.build"} 1\n',
    );
    await second.close();
    expect(namesIn(register)).toEqual([]);
  });

  it('fails the boot on a name taken already, and leaves the registry as it was', async () => {
    const registry = new Registry();
    const taken = new Counter({
      name: 'job_queue_jobs_started_total',
      help: 'Already here',
      registers: [registry],
    });
    await expect(
      file.start({
        queueOptions: { worker: false },
        imports: [JobQueueMetricsModule.forRoot({ registry })],
      }),
    ).rejects.toThrow(
      'A metric with the name job_queue_jobs_started_total has already been registered',
    );
    expect(registry.getMetricsAsArray()).toEqual([taken]);
  });

  it('refuses a prefix that cannot start a metric name, where the module is defined', () => {
    expect(() => JobQueueMetricsModule.forRoot({ prefix: 'job-queue.' })).toThrow(
      'JobQueueMetricsModule: prefix "job-queue." cannot start a Prometheus metric name',
    );
  });

  it('says what is missing in an app without a job queue', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [JobQueueMetricsModule.forRoot({ registry: new Registry() })],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(
      'JobQueueMetricsModule found no job queue in this app: import JobQueueModule.forRoot()',
    );
    await moduleRef.close().catch(() => undefined); // Nest's close rethrows the failed init
  });
});

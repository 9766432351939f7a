import { randomBytes } from 'node:crypto';
import { DynamicModule, INestApplicationContext, Provider } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  JobQueueModule,
  JobQueueModuleRootOptions,
  JobStatus,
  QueueService,
} from 'nest-pg-job-queue';
import { JOB_QUEUE_SCHEDULER } from '../../libs/job-queue/src/job-queue.constants';
import { createTestDatabase, TestDatabase } from '../support/database';
import { waitFor } from '../support/wait-for';
import { assertNoWorkerLeftRunning, startWorkerApp, WorkerApp } from '../support/worker-test-app';
import { HOST_INTERVAL, HOST_INTERVAL_MS, HostTimers, shortestGap } from '../fixtures/host-timers';
import { RECORD_JOB, RecordingHandlers } from '../fixtures/recording.handlers';
import { ShutdownHandlers } from '../fixtures/shutdown.handlers';

interface HostApp {
  app: INestApplicationContext;
  queue: QueueService;
  timers: HostTimers;
  workerId: string;
  close(): Promise<void>;
}

/** The five intervals a worker registers, by name. */
function queueIntervals(workerId: string): string[] {
  return [
    `job-queue:poll:${workerId}`,
    `job-queue:heartbeat:${workerId}`,
    `job-queue:reaper:${workerId}`,
    `job-queue:stager:${workerId}`,
    `job-queue:cron:${workerId}`,
    `job-queue:pruner:${workerId}`,
    `job-queue:stats:${workerId}`,
  ];
}

/**
 * A host app of its own timers (`HostTimers`) and the job queue: `JobQueueModule` must leave the
 * host's scheduling exactly as the host set it up, with or without `ScheduleModule`.
 */
describe('JobQueueModule in a host app with its own @nestjs/schedule timers', () => {
  let db: TestDatabase;
  let observer: WorkerApp;
  const hosts: HostApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    observer = await startWorkerApp({ url: db.url, queueOptions: { worker: false } });
  });

  afterAll(async () => {
    try {
      for (const host of hosts) await host.close();
      await observer?.close();
      if (db) await assertNoWorkerLeftRunning(db.url);
    } finally {
      await db?.drop();
    }
  });

  /** Boots `imports` (in that order) with a TypeORM data source, `HostTimers` and `providers`. */
  async function startHost(
    imports: DynamicModule[],
    workerId: string,
    providers: Provider[] = [RecordingHandlers],
  ): Promise<HostApp> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        ...imports,
      ],
      providers: [HostTimers, ...providers],
    }).compile();
    let closing: Promise<void> | undefined;
    const host: HostApp = {
      app: moduleRef,
      queue: moduleRef.get(QueueService),
      timers: moduleRef.get(HostTimers),
      workerId,
      close: () => (closing ??= moduleRef.close()),
    };
    hosts.push(host);
    await moduleRef.init();
    return host;
  }

  function queueModule(workerId: string, options: JobQueueModuleRootOptions = {}): DynamicModule {
    return JobQueueModule.forRoot({ workerId, worker: { pollIntervalMs: 50 }, ...options });
  }

  function newWorkerId(): string {
    return `host-schedule-${randomBytes(4).toString('hex')}`;
  }

  async function expectJobCompletes(host: HostApp, delayMs = 0): Promise<void> {
    const job = await host.queue.enqueue(RECORD_JOB, { host: host.workerId }, { delayMs });
    await waitFor(async () => (await host.queue.getJob(job.id)).status === JobStatus.Completed, {
      description: `job ${job.id} to complete`,
    });
  }

  describe.each<[string, (workerId: string) => DynamicModule[], number]>([
    // [host set-up, its imports, how often the host's @Timeout fires]
    [
      'ScheduleModule.forRoot() imported before the queue',
      (workerId) => [ScheduleModule.forRoot(), queueModule(workerId)],
      1,
    ],
    [
      'ScheduleModule.forRoot({ timeouts: false }) imported after a global queue',
      (workerId) => [
        queueModule(workerId, { isGlobal: true }),
        ScheduleModule.forRoot({ cronJobs: true, intervals: true, timeouts: false }),
      ],
      0,
    ],
  ])('host with %s', (_, imports, timeoutCalls) => {
    let host: HostApp;

    beforeAll(async () => {
      const workerId = newWorkerId();
      host = await startHost(imports(workerId), workerId);
    });

    afterAll(() => host?.close());

    it('runs a job', async () => {
      await expectJobCompletes(host);
    });

    it('runs each host timer once per period, as the host configured it', async () => {
      const { timers } = host;
      await waitFor(() => timers.cronCalls.length >= 3 && timers.intervalCalls.length >= 10, {
        description: '3 @Cron and 10 @Interval calls of the host',
      });
      // Mounted twice, a timer fires in pairs a few ms apart.
      expect(shortestGap(timers.intervalCalls)).toBeGreaterThan(HOST_INTERVAL_MS / 2);
      expect(shortestGap(timers.cronCalls)).toBeGreaterThan(500);
      // Two seconds on (three per-second @Cron calls), a 50 ms @Timeout has long had its turn.
      expect(timers.timeoutCalls).toHaveLength(timeoutCalls);
    });

    it("registers the queue's intervals in the host's SchedulerRegistry", () => {
      const registry = host.app.get(SchedulerRegistry);
      expect(host.app.get(JOB_QUEUE_SCHEDULER)).toBe(registry);
      expect(registry.getIntervals()).toEqual(
        expect.arrayContaining([HOST_INTERVAL, ...queueIntervals(host.workerId)]),
      );
    });
  });

  describe('host without ScheduleModule', () => {
    let host: HostApp;

    beforeAll(async () => {
      const workerId = newWorkerId();
      host = await startHost([queueModule(workerId)], workerId);
    });

    afterAll(() => host?.close());

    it('brings no ScheduleModule: the host decorators do nothing, and jobs still run', async () => {
      expect(() => host.app.get(SchedulerRegistry)).toThrow();
      // A job due in 1.5 s has completed: time enough for every host timer to have fired.
      await expectJobCompletes(host, 1_500);
      expect(host.timers.timeoutCalls).toEqual([]);
      expect(host.timers.intervalCalls).toEqual([]);
      expect(host.timers.cronCalls).toEqual([]);
    });

    it("keeps the queue's intervals in a registry of its own", () => {
      const registry = host.app.get<SchedulerRegistry>(JOB_QUEUE_SCHEDULER);
      expect(registry.getIntervals().sort()).toEqual(queueIntervals(host.workerId).sort());
    });
  });

  it("keeps renewing leases while draining, though the host's ScheduleModule clears its timers first", async () => {
    // Both modules global, the queue imported first: Nest runs ScheduleModule's
    // beforeApplicationShutdown (which clears every registered interval) before the queue's.
    const workerId = newWorkerId();
    const host = await startHost(
      [
        queueModule(workerId, {
          isGlobal: true,
          heartbeatIntervalMs: 50,
          shutdownTimeoutMs: 30_000,
          worker: { pollIntervalMs: 50, jobTypes: ['shutdown.drain'] },
        }),
        ScheduleModule.forRoot(),
      ],
      workerId,
      [ShutdownHandlers],
    );
    const handlers = host.app.get(ShutdownHandlers);
    const job = await host.queue.enqueue('shutdown.drain', {});
    await waitFor(() => handlers.started.includes(job.id), { description: 'the handler to start' });

    const heartbeatAt = async (): Promise<number> => {
      const [row] = await observer.dataSource.query(
        `SELECT extract(epoch FROM heartbeat_at) * 1000 AS at FROM job_queue.jobs WHERE id = $1`,
        [job.id],
      );
      return Number(row.at);
    };
    const [{ now }] = await observer.dataSource.query(
      `SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now`,
    );
    const closing = host.close();
    await waitFor(() => !host.app.get(SchedulerRegistry).doesExist('interval', HOST_INTERVAL), {
      description: "ScheduleModule's shutdown to clear the host's interval",
    });
    // Several heartbeats after the close began: the lease is renewed while the job drains.
    await waitFor(async () => (await heartbeatAt()) > Number(now) + 300, {
      description: 'a heartbeat 300 ms into the drain',
    });
    handlers.gate.open();
    await closing;

    expect(await observer.queue.getJob(job.id)).toMatchObject({
      status: JobStatus.Completed,
      attempts: 1,
      result: { finished: job.id },
    });
  });
});

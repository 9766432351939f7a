import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobStatus, JobWorker, QueueService } from 'nest-pg-job-queue';
import { AppModule } from '../../src/app.module';
import { JobQueueTester, JobQueueTestingModule } from 'nest-pg-job-queue/testing';
import { ReportsController } from '../../src/reports/reports.controller';
import { ReportsModule } from '../../src/reports/reports.module';
import {
  DAILY_REPORT_JOB,
  REPORT_GENERATION_JOB,
  REPORT_STAGES,
} from '../../src/reports/reports.constants';
import { createTestDatabase, TestDatabase } from '../support/database';

const DAY_MS = 86_400_000;

/**
 * The example app's reports, tested with the kit as the app's own team would: its feature
 * module beside `JobQueueTestingModule` (global, as the app registers the queue), its controller
 * as the producer, its handlers run by `drain` and `perform`.
 */
describe('example app: the reports feature, tested with the testing kit', () => {
  let db: TestDatabase;
  let module: TestingModule;
  let kit: JobQueueTester;
  const stageMs = process.env.REPORT_STAGE_MS;

  beforeAll(async () => {
    process.env.REPORT_STAGE_MS = '0';
    db = await createTestDatabase();
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
        JobQueueTestingModule.forRoot({ isGlobal: true }),
        ReportsModule,
      ],
    }).compile();
    await module.init();
    kit = module.get(JobQueueTester);
  });

  afterAll(async () => {
    if (stageMs === undefined) delete process.env.REPORT_STAGE_MS;
    else process.env.REPORT_STAGE_MS = stageMs;
    await module?.close();
    await db?.drop();
  });

  it('POST /reports enqueues one report a month, which drain() builds in its stages', async () => {
    const controller = module.get(ReportsController);
    const first = await controller.request({ month: '2026-11' });
    const again = await controller.request({ month: '2026-11' });
    expect(again.id).toBe(first.id);
    await kit.expectEnqueued({ type: REPORT_GENERATION_JOB, data: { month: '2026-11' }, count: 1 });

    const summary = await kit.drain({ types: [REPORT_GENERATION_JOB] });

    expect(summary).toMatchObject({ completed: 1, failed: 0 });
    expect(summary.runs[0].job).toMatchObject({
      status: JobStatus.Completed,
      progress: 100,
      currentStage: 'done',
      result: { month: '2026-11', rows: 1200, url: 'reports/2026-11.pdf' },
    });
  });

  it("the report handler reports each stage, then 100 'done' (perform)", async () => {
    const { result, progress, logs } = await kit.perform(REPORT_GENERATION_JOB, {
      month: '2026-12',
    });
    expect(result).toEqual({ month: '2026-12', rows: 1200, url: 'reports/2026-12.pdf' });
    expect(progress).toEqual([
      { percent: 0, stage: REPORT_STAGES[0][0] },
      ...REPORT_STAGES.slice(1).map(([stage], i) => ({ percent: REPORT_STAGES[i][1], stage })),
      { percent: 100, stage: 'done' },
    ]);
    expect(logs.map((line) => line.message)).toEqual(
      REPORT_STAGES.map(([stage]) => `${stage} for 2026-12`),
    );
  });

  it('the daily report runs once a day, for the day before its fire time in Berlin', async () => {
    const days: string[] = [];
    for (let day = 0; day < 3; day++) {
      kit.advanceTime(DAY_MS);
      const { runs } = await kit.drain({ types: [DAILY_REPORT_JOB] });
      days.push(...runs.map((run) => (run.job.result as { day: string }).day));
    }
    expect(days).toHaveLength(3);
    const [first, second, third] = days.map((day) => Date.parse(`${day}T00:00:00Z`));
    expect([second - first, third - second]).toEqual([DAY_MS, DAY_MS]);
  });
});

/**
 * The recipe for an app whose module imports `JobQueueModule.forRootAsync` itself: the example's
 * `AppModule`, used as it is, with the worker kept from starting by itself.
 */
describe('example app: its AppModule under Test.createTestingModule, with the kit', () => {
  let db: TestDatabase;
  let module: TestingModule;
  const databaseUrl = process.env.DATABASE_URL;

  beforeAll(async () => {
    db = await createTestDatabase();
    // AppModule's data source reads DATABASE_URL when its factory runs.
    process.env.DATABASE_URL = db.url;
    module = await JobQueueTestingModule.overrideIn(
      Test.createTestingModule({ imports: [AppModule] }),
    ).compile();
    await module.init();
  });

  afterAll(async () => {
    if (databaseUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = databaseUrl;
    await module?.close();
    await db?.drop();
  });

  it('does not start the worker; JobQueueTester.from(module) runs what the app enqueued', async () => {
    expect(module.get(JobWorker).isRunning).toBe(false);
    const kit = JobQueueTester.from(module);
    const report = await module.get(ReportsController).request({ month: '2027-01' });
    expect((await module.get(QueueService).getJob(report.id)).status).toBe(JobStatus.Pending);

    const summary = await kit.drain({ types: [REPORT_GENERATION_JOB] });

    expect(summary.completed).toBe(1);
    await kit.expectEnqueued({
      type: REPORT_GENERATION_JOB,
      data: { month: '2027-01' },
      status: JobStatus.Completed,
      count: 1,
    });
  });
});

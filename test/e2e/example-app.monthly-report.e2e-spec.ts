import {
  MONTHLY_MERGE_JOB,
  MONTHLY_REGION_JOB,
  REPORT_REGIONS,
  RegionFigures,
} from '../../src/reports/reports.constants';
import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

/** A job as the example app's routes answer it (src/jobs/job.response.ts, as JSON). */
interface JobJson {
  id: string;
  type: string;
  status: string;
  progress: number;
  stage: string | null;
  attempts: number;
  startedAt: string | null;
  result: unknown;
  lastError: string | null;
}

interface MonthlyReportJson {
  flowId: string;
  report: JobJson;
  regions: JobJson[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The example's monthly report, `POST /reports/monthly`: a flow of one job per region and a merge
 * that waits for them (src/reports/monthly-report.handlers.ts). Four worker slots for six regions,
 * so the regions take two rounds while the merge waits `blocked`.
 */
describe('example app: the monthly report, a fan-out of regions and a merge', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp({ WORKER_CONCURRENCY: 4, REGION_WORK_MS: 200 });
  });

  afterAll(async () => {
    await example?.close();
  });

  const getJob = async (id: string): Promise<JobJson> =>
    (await example.http().get(`/jobs/${id}`).expect(200)).body as JobJson;

  const requestReport = async (month: string): Promise<MonthlyReportJson> =>
    (await example.anonymous().post('/reports/monthly').send({ month }).expect(201))
      .body as MonthlyReportJson;

  const waitForStatus = (id: string, status: string) =>
    waitFor(
      async () => {
        const job = await getJob(id);
        return job.status === status ? job : undefined;
      },
      { timeoutMs: 30_000, description: `job ${id} to be ${status}` },
    );

  it("merges every region's figures, once every region's job has completed", async () => {
    const { flowId, report, regions } = await requestReport('2026-02');
    expect(flowId).toMatch(UUID);
    expect(report).toMatchObject({ type: MONTHLY_MERGE_JOB, status: 'blocked' });
    expect(regions.map((job) => [job.type, job.status])).toEqual(
      REPORT_REGIONS.map(() => [MONTHLY_REGION_JOB, 'pending']),
    );

    const merged = await waitForStatus(report.id, 'completed');
    const figures: Record<string, RegionFigures> = {};
    for (const [i, region] of REPORT_REGIONS.entries()) {
      const job = await getJob(regions[i].id);
      expect(job).toMatchObject({ status: 'completed', progress: 100, stage: 'done' });
      expect(job.result).toMatchObject({ region, month: '2026-02', days: 28 });
      figures[region] = job.result as RegionFigures;
    }
    const sum = (key: 'orders' | 'revenueCents') =>
      Object.values(figures).reduce((total, region) => total + region[key], 0);
    expect(merged).toMatchObject({ attempts: 1, progress: 100, stage: 'merged' });
    expect(merged.result).toEqual({
      month: '2026-02',
      regions: figures,
      totals: { orders: sum('orders'), revenueCents: sum('revenueCents') },
    });

    // By the database's clock: the merge's run began after the last region's job completed.
    const { rows } = await example.sql.query(
      `SELECT count(r.id)::int AS regions, count(r.completed_at)::int AS completed,
              m.started_at >= max(r.completed_at) AS merge_started_after,
              m.started_at::text AS merge_started, max(r.completed_at)::text AS last_region
       FROM job_queue.jobs m
       JOIN job_queue.jobs r ON r.flow_id = m.flow_id AND r.id <> m.id
       WHERE m.id = $1 AND m.flow_id = $2
       GROUP BY m.id`,
      [report.id, flowId],
    );
    expect(rows).toEqual([
      expect.objectContaining({ regions: 6, completed: 6, merge_started_after: true }),
    ]);

    // The report as an operator reads it back, by its flow id (admin token only).
    await example.anonymous().get(`/reports/monthly/${flowId}`).expect(401);
    const readBack = (await example.http().get(`/reports/monthly/${flowId}`).expect(200)).body as {
      flowId: string;
      report: JobJson;
      regions: JobJson[];
    };
    expect(readBack.flowId).toBe(flowId);
    expect(readBack.report).toMatchObject({ id: report.id, status: 'completed' });
    expect(readBack.report.result).toEqual(merged.result);
    expect(readBack.regions.map((job) => [job.id, job.status])).toEqual(
      regions.map((job) => [job.id, 'completed']),
    );
    await example.http().get('/reports/monthly/00000000-0000-4000-8000-000000000000').expect(404);
    const badId = await example.http().get('/reports/monthly/not-a-flow');
    expect({ status: badId.status, field: badId.body.field }).toEqual({
      status: 400,
      field: 'flowId',
    });
  });

  it('gives the same figures for the same month every time', async () => {
    const first = await requestReport('2026-03');
    const second = await requestReport('2026-03');
    expect(second.flowId).not.toBe(first.flowId);
    const [a, b] = await Promise.all([
      waitForStatus(first.report.id, 'completed'),
      waitForStatus(second.report.id, 'completed'),
    ]);
    expect(b.result).toEqual(a.result);
    expect(a.result).toMatchObject({ month: '2026-03' });
  });

  it('refuses a bad month with a 400 naming the field, and enqueues nothing', async () => {
    const refusals = [
      [{ month: '2026-13' }, 'month must be a month like "2026-11" (got "2026-13")'],
      [{ month: 202611 }, 'month must be a month like "2026-11" (got 202611)'],
      [{}, 'month must be a month like "2026-11" (got undefined)'],
    ] as const;
    for (const [body, message] of refusals) {
      const response = await example.anonymous().post('/reports/monthly').send(body);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: { statusCode: 400, error: 'Bad Request', message, field: 'month' },
      });
    }
    const notAnObject = await example.anonymous().post('/reports/monthly').send(['2026-11']);
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.body.field).toBe('body');

    const { rows } = await example.sql.query(
      `SELECT count(*)::int AS n FROM job_queue.jobs
       WHERE job_type = ANY($1) AND (data->>'month' IS NULL OR data->>'month' = ANY($2))`,
      [
        [MONTHLY_REGION_JOB, MONTHLY_MERGE_JOB],
        ['2026-13', '202611'],
      ],
    );
    expect(rows[0].n).toBe(0);
  });

  it('cancels a flow (admin token only): its regions and its merge, which never runs', async () => {
    // Paused regions wait as pending, so the whole flow is still unfinished when it is cancelled.
    await example.http().post(`/jobs/types/${MONTHLY_REGION_JOB}/pause`).expect(201);
    try {
      const { flowId, report, regions } = await requestReport('2026-04');
      await example.anonymous().post(`/reports/monthly/${flowId}/cancel`).expect(401);
      const badId = await example.http().post('/reports/monthly/not-a-flow/cancel');
      expect({ status: badId.status, field: badId.body.field }).toEqual({
        status: 400,
        field: 'flowId',
      });
      expect((await getJob(report.id)).status).toBe('blocked');

      const cancelled = (await example.http().post(`/reports/monthly/${flowId}/cancel`).expect(201))
        .body as JobJson[];
      const ids = [report.id, ...regions.map((job) => job.id)];
      expect(cancelled.map((job) => job.id).sort()).toEqual([...ids].sort());
      for (const id of ids) {
        expect(await getJob(id)).toMatchObject({ status: 'cancelled', startedAt: null });
      }
      // Nothing left to cancel.
      await example
        .http()
        .post(`/reports/monthly/${flowId}/cancel`)
        .expect(201)
        .expect((response) => expect(response.body).toEqual([]));
    } finally {
      await example.http().post(`/jobs/types/${MONTHLY_REGION_JOB}/resume`).expect(201);
    }
  });
});

import { InvalidJobInputError, JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

/**
 * Dependencies as the database keeps them: a job finishing (an UPDATE of its status, as the
 * worker, the reaper or cancel() makes it) moves its dependants on in the same statement. No
 * worker runs here: each test finishes jobs itself.
 */
describe('job dependencies', () => {
  const app = useQueueTestingModule();

  beforeEach(() =>
    app.dataSource.query(
      `TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_dependencies`,
    ),
  );

  /** Finishes job `id` as `status`, as a worker's outcome would. */
  async function finish(id: string, status: 'completed' | 'failed', result: unknown = null) {
    await app.dataSource.query(
      `UPDATE job_queue.jobs SET status = $2::text, completed_at = now(), result = $3::jsonb,
              attempts = 1, last_error = CASE WHEN $2::text = 'failed' THEN E'Error: boom\\n    at x (/app/a.js:1:1)' END
       WHERE id = $1`,
      [id, status, JSON.stringify(result)],
    );
  }

  async function statusOf(id: string): Promise<JobStatus> {
    return (await app.queue.getJob(id)).status;
  }

  it('blocks a job until every dependency completed, then makes it pending', async () => {
    const a = await app.queue.enqueue('a', {});
    const b = await app.queue.enqueue('b', {});
    const merge = await app.queue.enqueue('merge', {}, { dependsOn: [a.id, Number(b.id)] });
    expect(merge).toMatchObject({
      status: JobStatus.Blocked,
      unfinishedDependencies: 2,
      onDependencyFailure: 'fail',
    });
    await finish(a.id, 'completed');
    expect(await app.queue.getJob(merge.id)).toMatchObject({
      status: JobStatus.Blocked,
      unfinishedDependencies: 1,
    });
    await finish(b.id, 'completed');
    expect(await app.queue.getJob(merge.id)).toMatchObject({
      status: JobStatus.Pending,
      unfinishedDependencies: 0,
    });
  });

  it('counts a dependency that completed already at once', async () => {
    const a = await app.queue.enqueue('a', {});
    await finish(a.id, 'completed');
    const next = await app.queue.enqueue('next', {}, { dependsOn: [a.id] });
    expect(next.status).toBe(JobStatus.Pending);
  });

  it('fails a dependant with the default policy when a dependency fails, and down the graph', async () => {
    const flow = await app.queue.flow({
      steps: [
        { name: 'extract', type: 'extract', data: {} },
        { name: 'load', type: 'load', data: {}, dependsOn: ['extract'] },
        { name: 'report', type: 'report', data: {}, dependsOn: ['load'] },
      ],
    });
    await finish(flow.steps.extract.id, 'failed');
    const load = await app.queue.getJob(flow.steps.load.id);
    expect(load).toMatchObject({ status: JobStatus.Failed, attempts: 0 });
    expect(load.lastError).toBe(`Dependency ${flow.steps.extract.id} (extract) failed`);
    expect(await app.queue.getJob(flow.steps.report.id)).toMatchObject({
      status: JobStatus.Failed,
      lastError: `Dependency ${load.id} (load) failed`,
    });
  });

  it("runs a 'continue' dependant once every dependency finished, whatever became of each", async () => {
    const a = await app.queue.enqueue('a', {});
    const b = await app.queue.enqueue('b', {});
    const merge = await app.queue.enqueue(
      'merge',
      {},
      { dependsOn: [a.id, b.id], onDependencyFailure: 'continue' },
    );
    await finish(a.id, 'failed');
    expect(await statusOf(merge.id)).toBe(JobStatus.Blocked);
    await app.queue.cancel(b.id);
    expect(await statusOf(merge.id)).toBe(JobStatus.Pending);
  });

  it('applies the policy at once to a dependency that failed already', async () => {
    const a = await app.queue.enqueue('a', {});
    await finish(a.id, 'failed');
    const failing = await app.queue.enqueue('x', {}, { dependsOn: [a.id] });
    expect(failing).toMatchObject({ status: JobStatus.Failed, attempts: 0 });
    expect(failing.lastError).toBe(`Dependency ${a.id} (a) failed`);
    const going = await app.queue.enqueue(
      'y',
      {},
      { dependsOn: [a.id], onDependencyFailure: 'continue' },
    );
    expect(going.status).toBe(JobStatus.Pending);
  });

  it('makes a dependant scheduled, not pending, when its own run_at is later', async () => {
    const a = await app.queue.enqueue('a', {});
    const later = await app.queue.enqueue('later', {}, { dependsOn: [a.id], delayMs: 3_600_000 });
    await finish(a.id, 'completed');
    expect(await statusOf(later.id)).toBe(JobStatus.Scheduled);
  });

  it('enqueues a tree: each node waits for its children', async () => {
    const { flowId, jobs, steps } = await app.queue.flow({
      type: 'report.merge',
      data: { month: '2026-11' },
      children: [
        { name: 'eu', type: 'report.region', data: { region: 'eu' } },
        { type: 'report.region', data: { region: 'us' } },
      ],
    });
    expect(Object.keys(steps)).toEqual(['root', 'eu', 'root.1']);
    expect(jobs.map((job) => [job.stepName, job.status, job.flowId])).toEqual([
      ['root', JobStatus.Blocked, flowId],
      ['eu', JobStatus.Pending, flowId],
      ['root.1', JobStatus.Pending, flowId],
    ]);
    await finish(steps.eu.id, 'completed', { total: 1 });
    await finish(steps['root.1'].id, 'completed', { total: 2 });
    expect(await statusOf(steps.root.id)).toBe(JobStatus.Pending);
  });

  it('refuses a cycle, an unknown step, a repeated name, uniqueness and sizes over the caps, writing nothing', async () => {
    const refused = async (promise: Promise<unknown>, field: string, says = '') => {
      const error = await promise.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidJobInputError);
      expect((error as InvalidJobInputError).field).toBe(field);
      expect((error as Error).message).toContain(says);
    };
    await refused(
      app.queue.flow({
        steps: [
          { name: 'a', type: 't', data: {}, dependsOn: ['c'] },
          { name: 'b', type: 't', data: {}, dependsOn: ['a'] },
          { name: 'c', type: 't', data: {}, dependsOn: ['b'] },
        ],
      }),
      'steps[1].dependsOn',
      'a → c → b → a',
    );
    await refused(
      app.queue.flow({ steps: [{ name: 'a', type: 't', data: {}, dependsOn: ['nope'] }] }),
      'steps[0].dependsOn[0]',
    );
    await refused(
      app.queue.flow({
        steps: [
          { name: 'a', type: 't', data: {} },
          { name: 'a', type: 't', data: {} },
        ],
      }),
      'steps[1].name',
    );
    await refused(
      app.queue.flow({ steps: [{ name: 'a', type: 't', data: {}, uniqueKey: 'k' } as never] }),
      'steps[0].uniqueKey',
    );
    await refused(
      app.queue.flow({
        steps: Array.from({ length: 10_001 }, (_, i) => ({ name: `s${i}`, type: 't', data: {} })),
      }),
      'steps',
      'maxBatchSize',
    );
    await refused(
      app.queue.flow({
        type: 't',
        data: {},
        children: Array.from({ length: 1_001 }, () => ({ type: 't', data: {} })),
      }),
      'children',
      'at most 1000',
    );
    const ids = Array.from({ length: 1_001 }, (_, i) => String(i + 1));
    await refused(app.queue.enqueue('t', {}, { dependsOn: ids }), 'dependsOn', 'at most 1000');
    await refused(app.queue.enqueue('t', {}, { dependsOn: ['999999'] }), 'dependsOn[0]');
    await refused(app.queue.enqueue('t', {}, { dependsOn: [] }), 'dependsOn');
    await refused(
      app.queue.enqueue('t', {}, { onDependencyFailure: 'continue' }),
      'onDependencyFailure',
    );
    const [{ count }]: Array<{ count: string }> = await app.dataSource.query(
      `SELECT count(*) FROM job_queue.jobs`,
    );
    expect(count).toBe('0');
  });

  it('cancels what a flow has not finished, and reads its jobs', async () => {
    const flow = await app.queue.flow({
      steps: [
        { name: 'a', type: 't', data: {} },
        { name: 'b', type: 't', data: {} },
        { name: 'c', type: 't', data: {}, dependsOn: ['a', 'b'] },
      ],
    });
    await finish(flow.steps.a.id, 'completed');
    const cancelled = await app.queue.cancelFlow(flow.flowId);
    expect(cancelled.map((job) => job.stepName).sort()).toEqual(['b', 'c']);
    const jobs = await app.queue.getFlow(flow.flowId.toUpperCase());
    expect(jobs.map((job) => [job.stepName, job.status])).toEqual([
      ['a', JobStatus.Completed],
      ['b', JobStatus.Cancelled],
      ['c', JobStatus.Cancelled],
    ]);
    expect(await app.queue.getFlow('00000000-0000-4000-8000-000000000000')).toEqual([]);
    await expect(app.queue.getFlow('nope')).rejects.toMatchObject({ field: 'flowId' });
    expect(await statusOf(flow.steps.a.id)).toBe(JobStatus.Completed);
    expect(await statusOf(flow.steps.c.id)).toBe(JobStatus.Cancelled);
  });

  it('keeps a finished dependency from retention while its dependant is unfinished', async () => {
    const a = await app.queue.enqueue('a', {});
    const b = await app.queue.enqueue('b', {});
    const merge = await app.queue.enqueue('merge', {}, { dependsOn: [a.id, b.id] });
    await finish(a.id, 'completed');
    expect(await app.queue.prune({ olderThanMs: 0 })).toBe(0);
    await finish(b.id, 'completed');
    await finish(merge.id, 'completed');
    expect(await app.queue.prune({ olderThanMs: 0 })).toBe(3);
    const [{ edges }]: Array<{ edges: string }> = await app.dataSource.query(
      `SELECT count(*) AS edges FROM job_queue.job_dependencies`,
    );
    expect(edges).toBe('0');
  });
});

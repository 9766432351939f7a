import { JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';

/**
 * A dependency that finished and then runs again (retry, redrive, a retry after a cancel): its
 * blocked dependants wait for it again, so each edge is counted as finished once per time its
 * dependency finishes. Dependants that already left `blocked` keep what happened to them. No
 * worker runs here: each test finishes jobs itself, as a worker's outcome would.
 */
describe('job dependencies: a dependency that runs again', () => {
  const app = useQueueTestingModule();

  beforeEach(() =>
    app.dataSource.query(
      `TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_dependencies`,
    ),
  );

  async function finish(id: string, status: 'completed' | 'failed') {
    await app.dataSource.query(
      `UPDATE job_queue.jobs SET status = $2::text, completed_at = now(), attempts = 1,
              last_error = CASE WHEN $2::text = 'failed' THEN 'Error: boom' END
       WHERE id = $1`,
      [id, status],
    );
  }

  async function waiting(onDependencyFailure: 'fail' | 'continue') {
    const a = await app.queue.enqueue('wf.a', {});
    const b = await app.queue.enqueue('wf.b', {});
    const merge = await app.queue.enqueue(
      'wf.merge',
      {},
      { dependsOn: [a.id, b.id], onDependencyFailure },
    );
    return { a: a.id, b: b.id, merge: merge.id };
  }

  const stateOf = async (id: string) => {
    const job = await app.queue.getJob(id);
    return { status: job.status, unfinishedDependencies: job.unfinishedDependencies };
  };

  it("waits for a retried dependency again under 'continue': finishing twice counts once", async () => {
    const { a, b, merge } = await waiting('continue');
    await finish(a, 'failed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Blocked, unfinishedDependencies: 1 });
    await app.queue.retry(a);
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Blocked, unfinishedDependencies: 2 });
    await finish(a, 'completed');
    // B is still pending: the merge must not run yet.
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Blocked, unfinishedDependencies: 1 });
    await finish(b, 'completed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Pending, unfinishedDependencies: 0 });
  });

  it('counts a redriven dependency that fails again once, and a cancelled one retried once', async () => {
    const { a, b, merge } = await waiting('continue');
    await finish(a, 'failed');
    expect(await app.queue.redrive({ ids: [a] })).toBe(1);
    await finish(a, 'failed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Blocked, unfinishedDependencies: 1 });

    await app.queue.cancel(b);
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Pending, unfinishedDependencies: 0 });
    const other = await waiting('continue');
    await app.queue.cancel(other.a);
    await app.queue.retry(other.a);
    await finish(other.a, 'completed');
    expect(await stateOf(other.merge)).toEqual({
      status: JobStatus.Blocked,
      unfinishedDependencies: 1,
    });
  });

  it("leaves a dependant that was already released under 'continue' as it is", async () => {
    const { a, b, merge } = await waiting('continue');
    await finish(a, 'failed');
    await finish(b, 'completed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Pending, unfinishedDependencies: 0 });
    await app.queue.retry(a);
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Pending, unfinishedDependencies: 0 });
    await finish(a, 'completed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Pending, unfinishedDependencies: 0 });
  });

  it("keeps a dependant failed by its dependency under 'fail' failed when the dependency is retried", async () => {
    const { a, b, merge } = await waiting('fail');
    await finish(a, 'failed');
    expect(await stateOf(merge)).toEqual({ status: JobStatus.Failed, unfinishedDependencies: 1 });
    await app.queue.retry(a);
    await finish(a, 'completed');
    await finish(b, 'completed');
    const job = await app.queue.getJob(merge);
    expect(job).toMatchObject({ status: JobStatus.Failed, attempts: 0 });
    expect(job.lastError).toBe(`Dependency ${a} (wf.a) failed`);
  });
});

import { Injectable } from '@nestjs/common';
import { Job, JobContext, JobHandler, JobStatus } from 'nest-pg-job-queue';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile } from '../support/worker-test-app';

/**
 * What the randomized model test (`npm run fuzz`) found on today's code, each as the shortest
 * scenario that shows it. They are `it.failing` while the defect is open (the test passes because
 * its body fails); the issue that fixes one turns it into a plain test and removes its entry from
 * `KNOWN_DEFECTS` in test/fuzz/invariants.ts.
 */

const DEPENDENCY = 'kd.dependency';
const OTHER_DEPENDENCY = 'kd.other-dependency';
const DEPENDANT = 'kd.dependant';
const LIMITED = 'kd.limited';
const HELD = 'kd.held';
const STOPPED = 'kd.stopped';
const FINISHED: string[] = [JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled];

@Injectable()
class DependencyHandlers {
  @JobHandler(DEPENDENCY)
  complete(): { done: true } {
    return { done: true };
  }
}

/** Before the deploy: one job a key at a time, and a rate by key. Runs until aborted. */
@Injectable()
class KeyLimitedHandlers {
  @JobHandler(LIMITED, { concurrencyPerKey: 1, rateLimit: { max: 100, perMs: 1_000, byKey: true } })
  hold(_job: Job, ctx: JobContext): Promise<never> {
    return untilAborted(ctx);
  }
}

/** After the deploy: the per-key limit removed, the rate by key kept. Completes at once. */
@Injectable()
class RateOnlyHandlers {
  @JobHandler(LIMITED, { rateLimit: { max: 100, perMs: 1_000, byKey: true } })
  complete(): { done: true } {
    return { done: true };
  }
}

/** Runs until aborted: keeps a slot busy, or is stopped by a shutdown. */
function untilAborted(ctx: JobContext): Promise<never> {
  return new Promise((_, reject) => {
    if (ctx.signal.aborted) reject(ctx.signal.reason);
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
  });
}

@Injectable()
class HoldingHandlers {
  @JobHandler(HELD)
  hold(_job: Job, ctx: JobContext): Promise<never> {
    return untilAborted(ctx);
  }

  @JobHandler(STOPPED)
  stopped(_job: Job, ctx: JobContext): Promise<never> {
    return untilAborted(ctx);
  }
}

describe('known defects found by the randomized model test', () => {
  const file = useWorkerTestFile();

  it('dependency-counted-twice (fixed): a dependant stays blocked while another dependency is unfinished, after one was cancelled, retried and completed', async () => {
    const producer = await file.start({ queueOptions: { worker: false } });
    const { queue } = producer;
    // A can run (a worker handles its type); B cannot (no worker handles its type).
    const a = await queue.enqueue(DEPENDENCY, {}, { delayMs: 3_600_000 });
    const b = await queue.enqueue(OTHER_DEPENDENCY, {});
    const w = await queue.enqueue(
      DEPENDANT,
      {},
      { dependsOn: [a.id, b.id], onDependencyFailure: 'continue' },
    );
    await queue.cancel(a.id);
    await queue.retry(a.id);
    await file.start({
      queueOptions: { worker: { jobTypes: [DEPENDENCY], pollIntervalMs: 20 } },
      providers: [DependencyHandlers],
    });
    await waitFor(async () => (await queue.getJob(a.id)).status === JobStatus.Completed, {
      description: `dependency ${a.id} to complete`,
    });
    expect((await queue.getJob(b.id)).status).toBe(JobStatus.Pending);
    expect((await queue.getJob(w.id)).status).toBe(JobStatus.Blocked);
  });

  it('waiting-after-limit-change (fixed): jobs waiting for a key’s slot run once a deploy removes the per-key limit and keeps a rate by key', async () => {
    const first = await file.start({
      queueOptions: { worker: { concurrency: 5, pollIntervalMs: 20 }, shutdownTimeoutMs: 200 },
      providers: [KeyLimitedHandlers],
    });
    const jobs = await first.queue.enqueueMany(
      Array.from({ length: 5 }, (_, n) => ({ type: LIMITED, data: { n }, concurrencyKey: 'k' })),
    );
    const ids = jobs.map((job) => job.id);
    const statuses = async (): Promise<string[]> =>
      Promise.all(ids.map(async (id) => (await first.queue.getJob(id)).status));
    await waitFor(
      async () => (await statuses()).filter((status) => status === JobStatus.Waiting).length === 4,
      { description: 'one job running and four waiting on key k' },
    );
    const observer = await file.start({ queueOptions: { worker: false } });
    await first.close();
    await file.start({
      queueOptions: { worker: { concurrency: 5, pollIntervalMs: 20 } },
      providers: [RateOnlyHandlers],
    });
    await waitFor(
      async () => {
        const now = await Promise.all(
          ids.map(async (id) => (await observer.queue.getJob(id)).status),
        );
        return now.every((status) => FINISHED.includes(status));
      },
      { timeoutMs: 10_000, description: 'every job of key k to finish after the deploy' },
    );
  });

  it.failing(
    'held-attempt-spent: a job held by a worker and cancelled before its handler started spends no attempt',
    async () => {
      const worker = await file.start({
        queueOptions: { worker: { concurrency: 1, prefetch: 4, pollIntervalMs: 20 } },
        providers: [HoldingHandlers],
      });
      const first = await worker.queue.enqueue(HELD, { n: 1 }, { priority: 200 });
      await waitFor(
        async () => (await worker.queue.getJob(first.id)).status === JobStatus.Running,
        {
          description: 'the first job to run',
        },
      );
      const held = await worker.queue.enqueue(HELD, { n: 2 });
      // Claimed into the worker's hold: its one slot is busy with the first job.
      await waitFor(async () => (await worker.queue.getJob(held.id)).workerId !== null, {
        description: 'the second job to be held',
      });
      const cancelled = await worker.queue.cancel(held.id);
      expect(cancelled.status).toBe(JobStatus.Cancelled);
      expect(cancelled.attempts).toBe(0);
      expect(cancelled.startedAt).toBeNull();
    },
  );

  it.failing(
    'shutdown-stop-unlogged: a run stopped at shutdown after its handler started is in the job’s log',
    async () => {
      const worker = await file.start({
        queueOptions: {
          worker: { pollIntervalMs: 20 },
          shutdownTimeoutMs: 200,
          events: { logCompletedRuns: true },
        },
        providers: [HoldingHandlers],
      });
      const job = await worker.queue.enqueue(STOPPED, {});
      await waitFor(async () => (await worker.queue.getJob(job.id)).status === JobStatus.Running, {
        description: 'the job to run',
      });
      const observer = await file.start({ queueOptions: { worker: false } });
      await worker.close();
      await waitFor(
        async () => (await observer.queue.getJob(job.id)).status === JobStatus.Pending,
        {
          description: 'the job to be handed back',
        },
      );
      const kinds = (await observer.queue.jobEvents(job.id)).map((entry) => entry.kind);
      expect(kinds.filter((kind) => !['claimed', 'log', 'progress'].includes(kind))).not.toEqual(
        [],
      );
    },
  );
});

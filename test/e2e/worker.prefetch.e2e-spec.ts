import { JobStatus, JobWorker } from 'nest-pg-job-queue';
import { CapturingLogger } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';
import { useGatedWorkerFile } from '../support/gated-worker';
import {
  FREE_JOB,
  LIMITED_CONCURRENCY,
  LIMITED_JOB,
  ORDERED_JOB,
} from '../fixtures/concurrency.handlers';

interface HeldRow {
  id: string;
  status: string;
  attempts: number;
  heartbeat_at: Date | null;
  claimed_at: Date | null;
}

/**
 * `worker.prefetch`: a worker claims that many jobs beyond its free slots and holds them until a
 * slot frees. Held jobs are leased to it (running, renewed by the heartbeat), never run beyond
 * `concurrency` or a type's own limit, are dropped when cancelled, and go back to the queue,
 * their attempt given back, when the worker stops.
 */
describe('worker: prefetch', () => {
  const file = useGatedWorkerFile();

  async function enqueue(type: string, count: number, priority?: number): Promise<string[]> {
    const jobs = await file.producer.queue.enqueueMany(
      Array.from({ length: count }, (_, i) => ({ type, data: { i }, priority })),
    );
    return jobs.map((job) => job.id);
  }

  /** The jobs the worker holds in the database (claimed or running), by id. */
  async function held(workerId: string): Promise<HeldRow[]> {
    return file.producer.dataSource.query(
      `SELECT id::text AS id, status, attempts, heartbeat_at, claimed_at FROM job_queue.jobs
       WHERE worker_id = $1 AND status IN ('claimed', 'running') ORDER BY id`,
      [workerId],
    );
  }

  /** Waits until the worker holds `count` jobs in the database (running or prefetched). */
  async function untilHeld(workerId: string, count: number, description: string): Promise<void> {
    await waitFor(async () => (await held(workerId)).length === count, { description });
  }

  it('holds up to prefetch jobs beyond its slots, runs at most concurrency at once, each job once', async () => {
    const ids = await enqueue(FREE_JOB, 40);
    const { probe, workerId } = await file.start({
      worker: { concurrency: 3, prefetch: 10, pollIntervalMs: 20 },
    });

    await untilHeld(workerId, 13, '3 running and 10 prefetched jobs held by the worker');
    expect(probe.inFlight.total).toBe(3);

    probe.gate.open();
    await waitFor(() => probe.completed.length === 40, { description: 'every job to run' });
    expect(new Set(probe.started)).toEqual(new Set(ids));
    expect(probe.started).toHaveLength(40);
    expect(probe.maxInFlight.total).toBe(3);
    await waitFor(
      async () => (await file.producer.queue.stats({ maxAgeMs: 0 }))[FREE_JOB]?.completed === 40,
      { description: 'every job to be completed' },
    );
  });

  it("counts a type's prefetched jobs against its own limit", async () => {
    // Every slot full (the gate shut), one limited job running: the limited type has one free
    // slot of its own, so the next claim may take one more of it, to wait here, and no claim
    // after that may take another, however many rank first.
    const workerOptions = { concurrency: 3, prefetch: 10, pollIntervalMs: 20 };
    const [firstLimited] = await enqueue(LIMITED_JOB, 1, 200);
    await enqueue(FREE_JOB, 2);
    const { probe, workerId } = await file.start({ worker: workerOptions });
    await waitFor(() => probe.inFlight.total === 3, { description: 'every slot to be taken' });
    expect(probe.started).toContain(firstLimited);

    const waiting = await enqueue(LIMITED_JOB, 5, 200);
    const heldLimited = async () =>
      (await held(workerId)).filter((row) => waiting.includes(row.id)).length;
    await waitFor(async () => (await heldLimited()) === 1, {
      description: 'a second limited job to be prefetched',
    });
    // A job enqueued after them is claimed by a later poll, which must leave the rest alone.
    const [marker] = await enqueue(FREE_JOB, 1);
    await waitFor(async () => (await held(workerId)).some((row) => row.id === marker), {
      description: 'a later claim to take the job enqueued last',
    });
    expect(await heldLimited()).toBe(1);

    probe.gate.open();
    await waitFor(() => probe.completed.length === 9, { description: 'every job to run' });
    expect(probe.maxInFlight[LIMITED_JOB]).toBe(LIMITED_CONCURRENCY);
    expect(probe.maxInFlight.total).toBe(3);
  });

  it('never holds a job of an ordered type: it waits for a free slot, better jobs or not', async () => {
    const [running] = await enqueue(FREE_JOB, 1);
    const { probe, workerId } = await file.start({
      worker: { concurrency: 1, prefetch: 10, pollIntervalMs: 20 },
    });
    await waitFor(() => probe.inFlight.total === 1, { description: 'the slot to be taken' });
    const ordered = (
      await file.producer.queue.enqueueMany(
        ['a', 'b', 'c'].map((key) => ({
          type: ORDERED_JOB,
          data: {},
          priority: 200,
          concurrencyKey: key,
        })),
      )
    ).map((job) => job.id);
    const later = await enqueue(FREE_JOB, 5);

    // The five later free jobs are held: claims had room ahead of the slot, and the better
    // ordered jobs were not taken into it.
    await untilHeld(workerId, 6, 'the running job and the five later ones held');
    expect((await held(workerId)).map((row) => row.id).sort()).toEqual([running, ...later].sort());

    probe.gate.open();
    await waitFor(() => probe.completed.length === 9, { description: 'every job to run' });
    expect(new Set(probe.started)).toEqual(new Set([running, ...ordered, ...later]));
  });

  it('a better job claimed later starts before the worse ones held before it', async () => {
    const [running] = await enqueue(FREE_JOB, 1, 100);
    const { probe, workerId } = await file.start({
      worker: { concurrency: 1, prefetch: 10, pollIntervalMs: 20 },
    });
    await waitFor(() => probe.inFlight.total === 1, { description: 'the slot to be taken' });
    const heldBefore = await enqueue(FREE_JOB, 10, 100);
    await untilHeld(workerId, 11, 'the running job and ten held');
    const [urgent] = await enqueue(FREE_JOB, 1, 500);

    probe.gate.open();
    await waitFor(() => probe.completed.length === 12, { description: 'every job to run' });
    // The next claim goes out once half of the held jobs have started; what it brings that is
    // better than the rest held starts first.
    const lastHeldStart = Math.max(...heldBefore.map((id) => probe.started.indexOf(id)));
    expect(probe.started[0]).toBe(running);
    expect(probe.started.indexOf(urgent)).toBeLessThan(lastHeldStart);
  });

  it('hands prefetched jobs back on shutdown, their attempt given back, without running them', async () => {
    const ids = await enqueue(FREE_JOB, 10);
    const { app, probe, workerId } = await file.start({
      worker: { concurrency: 2, prefetch: 5, pollIntervalMs: 20 },
      shutdownTimeoutMs: 100,
    });
    await untilHeld(workerId, 7, '2 running and 5 prefetched jobs held by the worker');

    await app.close(); // the gate stays shut: the 2 running are aborted after 100 ms
    expect(probe.started).toHaveLength(2);
    const rows: Array<{ status: string; attempts: number }> = await file.producer.dataSource.query(
      `SELECT status, attempts FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    expect(rows).toHaveLength(10);
    expect(rows.every((row) => row.status === JobStatus.Pending && row.attempts === 0)).toBe(true);
  });

  it('starts clean after stop() and start(): nothing held before the stop runs from memory', async () => {
    const ids = await enqueue(FREE_JOB, 4);
    const { app, probe, workerId } = await file.start({
      worker: { concurrency: 1, prefetch: 3, pollIntervalMs: 20 },
      shutdownTimeoutMs: 100,
    });
    await untilHeld(workerId, 4, 'the worker to hold all 4 jobs');
    const [aborted] = probe.started;

    const jobWorker = app.app.get(JobWorker);
    await jobWorker.stop(); // the running job is aborted, all 4 are handed back
    expect((await held(workerId)).length).toBe(0);
    probe.gate.open();
    await jobWorker.start();
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => file.producer.queue.getJob(id)))).every(
          (job) => job.status === JobStatus.Completed,
        ),
      { description: 'every job to be completed' },
    );
    // The 3 that waited in memory ran once each, claimed anew; only the aborted one ran twice.
    expect([...probe.started].sort()).toEqual([...ids, aborted].sort());
  });

  it.each([
    // Heartbeat at its default (10 s): only the NOTIFY can drop it in time.
    ['by its NOTIFY', { listen: true }, {}, /Prefetched job (\d+) was cancelled/],
    [
      'by the heartbeat (LISTEN off)',
      { listen: false },
      { heartbeatIntervalMs: 50 },
      /Prefetched job (\d+) is no longer this worker's/,
    ],
  ])(
    'drops a cancelled prefetched job %s: it never runs',
    async (_how, workerOptions, options, dropped) => {
      const ids = await enqueue(FREE_JOB, 4);
      const logger = new CapturingLogger();
      const { probe, workerId } = await file.start(
        {
          worker: { concurrency: 1, prefetch: 5, pollIntervalMs: 20, ...workerOptions },
          ...options,
        },
        logger,
      );
      await untilHeld(workerId, 4, 'the worker to hold all 4 jobs');
      const victim = ids.find((id) => !probe.started.includes(id))!;
      await file.producer.queue.cancel(victim);
      await waitFor(() => logger.matching(dropped).length > 0, {
        description: 'the worker to drop the cancelled job',
      });
      expect(dropped.exec(logger.matching(dropped)[0].message)![1]).toBe(victim);

      probe.gate.open();
      await waitFor(() => probe.completed.length === 3, { description: 'the 3 other jobs to run' });
      expect(probe.started).not.toContain(victim);
      expect((await file.producer.queue.getJob(victim)).status).toBe(JobStatus.Cancelled);
    },
  );

  it('renews the lease of prefetched jobs: held past staleAfterMs, none is taken back', async () => {
    const ids = await enqueue(FREE_JOB, 3);
    const { probe, workerId } = await file.start({
      worker: { concurrency: 1, prefetch: 5, pollIntervalMs: 20 },
      staleAfterMs: 300,
      heartbeatIntervalMs: 50,
      reaperIntervalMs: 50,
    });
    await untilHeld(workerId, 3, 'the worker to hold all 3 jobs');
    // Held for more than twice staleAfterMs, with the reaper looking every 50 ms.
    await waitFor(
      async () =>
        (await held(workerId)).every(
          (row) => row.heartbeat_at!.getTime() - row.claimed_at!.getTime() > 600,
        ),
      { description: 'leases renewed past twice staleAfterMs' },
    );
    expect(await held(workerId)).toHaveLength(3);

    probe.gate.open();
    await waitFor(() => probe.completed.length === 3, { description: 'every job to run' });
    expect([...probe.started].sort()).toEqual([...ids].sort());
  });
});

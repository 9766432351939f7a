import { Injectable } from '@nestjs/common';
import { Job, JobContext, JobHandler, JobStatus, JobWorker } from 'nest-pg-job-queue';
import { dataSourcePool } from '../../libs/job-queue/src/sql/dedicated-connection';
import { CapturingLogger } from '../support/capturing-logger';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { HOLD_JOB, PoolHoldingHandlers } from '../fixtures/pool-holding.handlers';
import { RecordingHandlers } from '../fixtures/recording.handlers';
import { Gate } from '../support/gate';

const BLOCK_JOB = 'pool.block-loop';

/** Blocks this whole process (a synchronous wait) for `blockMs`, then waits for its gate. */
@Injectable()
class LoopBlockingHandlers {
  blockMs = 0;
  readonly gate = new Gate();

  @JobHandler(BLOCK_JOB)
  async block(_job: Job, ctx: JobContext): Promise<void> {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, this.blockMs);
    await this.gate.wait(ctx.signal);
  }
}

const STALE_AFTER_MS = 2_000;
const HEARTBEAT_INTERVAL_MS = 500;
const POOL_WARNING =
  /pool has (\d+) connection\(s\), fewer than worker\.concurrency \((\d+)\) \+ 1/;

/**
 * The worker's own connections: the heartbeat and LISTEN each have one outside the app's pool,
 * so handlers that hold pooled connections never make a lease wait, and a worker process opens
 * its pool plus two. The boot warns when the pool is smaller than `concurrency + 1`, and
 * start/stop cycles leave no listener or connection behind.
 */
describe('worker: its own connections beside the pool', () => {
  const file = useWorkerTestFile();

  const connectionsOfQueue = async (app: WorkerApp): Promise<string[]> =>
    (
      await app.dataSource.query(
        `SELECT application_name FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'nest-pg-job-queue %'
           AND application_name LIKE '% ' || $1
         ORDER BY application_name`,
        [app.workerId],
      )
    ).map((row: { application_name: string }) => row.application_name.split(' ')[1]);

  it('nine handlers holding pooled connections on a pool of 10, concurrency 10: all complete, none rescued', async () => {
    // Another node whose reaper takes back any job whose lease lapses.
    await file.start({
      queueOptions: {
        staleAfterMs: STALE_AFTER_MS,
        heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
        reaperIntervalMs: 100,
      },
    });
    const logger = new CapturingLogger();
    const app = await file.start({
      queueOptions: {
        worker: { concurrency: 10, pollIntervalMs: 50 },
        staleAfterMs: STALE_AFTER_MS,
        heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
      },
      providers: [PoolHoldingHandlers],
      poolSize: 10,
      logger,
    });
    const handlers = app.app.get(PoolHoldingHandlers);
    handlers.holdMs = 2.5 * STALE_AFTER_MS;
    const jobs = await app.queue.enqueueMany(
      Array.from({ length: 9 }, (_, i) => ({ type: HOLD_JOB, data: { i } })),
    );
    for (const job of jobs) {
      await waitFor(async () => (await app.queue.getJob(job.id)).status === JobStatus.Completed, {
        description: `job ${job.id} to complete`,
        timeoutMs: 30_000,
      });
    }
    expect(handlers.runs).toHaveLength(9);
    for (const job of jobs) expect((await app.queue.getJob(job.id)).attempts).toBe(1);
    expect(logger.matching(/stopped heartbeating|late/)).toEqual([]);
    // The pool of 10 is one short of concurrency 10 + 1: the boot said so.
    expect(
      logger.matching(POOL_WARNING).map((line) => line.message.match(POOL_WARNING)!.slice(1)),
    ).toEqual([['10', '10']]);
  }, 60_000);

  it('warns at boot when the pool is smaller than concurrency + 1, naming both and the fix', async () => {
    const small = new CapturingLogger();
    await file.start({
      queueOptions: { worker: { concurrency: 10 } },
      providers: [RecordingHandlers],
      poolSize: 4,
      logger: small,
    });
    const [warning] = small.matching(POOL_WARNING);
    expect(warning?.level).toBe('warn');
    expect(warning.message).toMatch(
      /pool has 4 connection\(s\), fewer than worker\.concurrency \(10\) \+ 1/,
    );
    expect(warning.message).toMatch(/poolSize \(or extra\.max\) to at least 11/);

    const enough = new CapturingLogger();
    await file.start({
      queueOptions: { worker: { concurrency: 10 } },
      providers: [RecordingHandlers],
      poolSize: 11,
      logger: enough,
    });
    expect(enough.matching(POOL_WARNING)).toEqual([]);
  });

  it('20 stop()/start() cycles: listener counts on every pooled client unchanged, no connection left', async () => {
    const app = await file.start({
      queueOptions: { worker: { concurrency: 2, pollIntervalMs: 50 } },
      providers: [RecordingHandlers],
      poolSize: 4,
    });
    // pg-pool's own: the clients it made; it puts one 'error' listener on each once connected.
    const pool = dataSourcePool(app.dataSource)! as unknown as { _clients: NodeJS.EventEmitter[] };
    const notPoolsOwn = () =>
      pool._clients
        .map((client) =>
          ['error', 'notification', 'end'].map((event) => client.listenerCount(event)).join('/'),
        )
        .filter((counts) => counts !== '0/0/0' && counts !== '1/0/0');
    const worker = app.app.get(JobWorker);
    expect(await connectionsOfQueue(app)).toEqual(['listen']);
    expect(notPoolsOwn()).toEqual([]);

    for (let cycle = 0; cycle < 20; cycle++) {
      await worker.stop();
      await worker.start();
    }
    // Every pooled client looks like one the pool made: no listener of ours is left on any.
    expect(notPoolsOwn()).toEqual([]);
    expect(await connectionsOfQueue(app)).toEqual(['listen']);

    await worker.stop();
    expect(await connectionsOfQueue(app)).toEqual([]);
  });

  it('a heartbeat held up by a blocked event loop warns, saying how late it was', async () => {
    const logger = new CapturingLogger();
    const app = await file.start({
      queueOptions: { staleAfterMs: 60_000, heartbeatIntervalMs: 200 },
      providers: [LoopBlockingHandlers],
      logger,
    });
    const handlers = app.app.get(LoopBlockingHandlers);
    handlers.blockMs = 1_000;
    try {
      await app.queue.enqueue(BLOCK_JOB, {});
      const late = /Heartbeat (\d+) ms late: leases renewed (\d+) ms after the previous beat/;
      const warning = await waitFor(() => logger.matching(late)[0], {
        description: 'the late heartbeat warning',
      });
      const [, lateMs, gapMs] = warning.message.match(late)!.map(Number);
      expect(gapMs).toBeGreaterThanOrEqual(1_000);
      expect(lateMs).toBe(gapMs - 200);
      expect(warning.level).toBe('warn');
    } finally {
      handlers.gate.open();
    }
  });
});

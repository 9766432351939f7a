import { JobQueueModuleOptions } from 'nest-pg-job-queue';
import { ConcurrencyHandlers } from '../fixtures/concurrency.handlers';
import { CapturingLogger } from './capturing-logger';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from './worker-test-app';

/** A worker booted by `GatedWorkerFile.start`: its app, its handlers (gate shut) and its id. */
export interface GatedWorker {
  app: WorkerApp;
  probe: ConcurrencyHandlers;
  workerId: string;
}

export interface GatedWorkerFile {
  /** The file's enqueue-only app (`worker: false`), booted in `beforeAll`. */
  readonly producer: WorkerApp;
  /** Boots one worker with `ConcurrencyHandlers`, its gate shut; it is closed after the test. */
  start(queueOptions: JobQueueModuleOptions, logger?: CapturingLogger): Promise<GatedWorker>;
  /** The jobs `workerId` holds in the database, claimed or running (prefetched ones included). */
  heldBy(workerId: string): Promise<number>;
}

/**
 * A test file of one enqueue-only producer and, per test, one worker whose handlers wait behind a
 * gate: after each test the gate opens, the worker drains and closes, and every job is deleted.
 */
export function useGatedWorkerFile(): GatedWorkerFile {
  let producer: WorkerApp | undefined;
  let current: GatedWorker | undefined;
  const closeCurrent = async () => {
    current?.probe.gate.open();
    await current?.app.close();
    current = undefined;
  };
  const file = useWorkerTestFile({ beforeClose: closeCurrent });
  beforeAll(async () => {
    producer = await file.start({ queueOptions: { worker: false } });
  });
  afterEach(async () => {
    await closeCurrent();
    await producer?.dataSource.query(`DELETE FROM job_queue.jobs`);
  });
  return {
    get producer(): WorkerApp {
      if (!producer) throw new Error('useGatedWorkerFile: the producer is booted in beforeAll');
      return producer;
    },
    async start(queueOptions, logger) {
      const app = await startWorkerApp({
        url: file.url,
        queueOptions,
        providers: [ConcurrencyHandlers],
        logger,
      });
      current = { app, probe: app.app.get(ConcurrencyHandlers), workerId: app.workerId };
      return current;
    },
    async heldBy(workerId) {
      const [row] = await this.producer.dataSource.query(
        `SELECT count(*)::int AS n FROM job_queue.jobs
         WHERE worker_id = $1 AND status IN ('claimed', 'running')`,
        [workerId],
      );
      return row.n;
    },
  };
}

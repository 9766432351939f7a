import { EVERY_PATH_QUEUE_OPTIONS, EveryPathHandlers } from '../fixtures/every-path';
import { assertNoWorkerLeftRunning, startWorkerApp, WorkerApp } from './worker-test-app';

/** Starts the app `exerciseEveryPath` drives, connected as `url`, its worker not started yet. */
export function startEveryPathWorker(url: string): Promise<WorkerApp> {
  return startWorkerApp({
    url,
    queueOptions: EVERY_PATH_QUEUE_OPTIONS,
    providers: [EveryPathHandlers],
  });
}

/**
 * For an `afterAll`: opens the gates a failed `exerciseEveryPath` may have left its handlers
 * waiting at, closes `worker` (if started) and checks that no worker is left running on
 * `databaseUrl`. The caller drops its roles and database after it, in a `finally`.
 */
export async function closeEveryPathWorker(
  worker: WorkerApp | undefined,
  databaseUrl: string,
): Promise<void> {
  const handlers = worker?.app.get(EveryPathHandlers);
  handlers?.blocking.open();
  handlers?.ignoring.open();
  await worker?.close();
  await assertNoWorkerLeftRunning(databaseUrl);
}
